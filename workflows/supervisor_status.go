package workflows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/lagview"
)

// status builds the answer to QueryStatus.
func (s *supervisor) status() SupervisorStatus {
	view := s.lagView()
	st := SupervisorStatus{
		ID: s.spec.ID, DataSource: s.spec.DataSchema.DataSource, Topic: s.spec.IOConfig.Source(),
		Topics: s.topics(), DeletedTopics: slices.Clone(s.c.DeletedTopics),
		State: s.c.State, DetailedState: s.c.DetailedState, Spec: s.spec, PendingSpec: s.c.PendingSpec != nil,
		Partitions: slices.Clone(s.c.Partitions),
		Committed:  s.c.Committed.Clone(),
		// As the view raised them to be consistent; a partition no
		// group reported on has no current offset.
		Current: lagview.Overlay(s.c.Current, view.Current()), Latest: lagview.Overlay(s.c.Latest, view.Latest()),
		LatestAt: view.LatestAt, LatestRaised: view.Raised(),
		PartitionLag: view.Lags(), Lag: view.Lag,
		PartitionUnpublished: view.UnpublishedByPartition(), Unpublished: view.Unpublished,
		Read: s.c.Read, Published: s.c.Published, RecentErrors: slices.Clone(s.c.RecentErrors),
		OffsetResets:   slices.Clone(s.c.OffsetResets),
		Autoscaler:     s.autoscalerStatus(),
		IsolationLevel: s.spec.IOConfig.IsolationLevel(),
	}
	if w := s.c.Watched; w != nil {
		st.Held = slices.Clone(w.Held)
	}
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		gs := GroupStatus{
			Group: g, WorkflowID: TaskGroupWorkflowID(s.spec.ID, g), Generation: rec.Generation,
			Partitions: rec.Partitions, Running: rec.Running, Failures: rec.Failures,
			OutOfRange: rec.OutOfRange,
		}
		for _, q := range rec.Sequences {
			gs.Sequences = append(gs.Sequences, SequenceStatus{Sequence: q, Rows: rec.SequenceRows[q.ID]})
		}
		st.Groups = append(st.Groups, gs)
	}
	return st
}

// lagView is the supervisor's offsets made consistent (internal/lagview):
// before a partition's first publish, its unpublished records count from
// where its group began reading it.
func (s *supervisor) lagView() lagview.View {
	return lagview.Compute(lagview.Input{
		Committed: lagview.Base(s.c.Committed, s.sequenceStarts()...), Current: s.c.Current,
		Latest: s.c.Latest, LatestAt: s.c.LatestAt,
	})
}

// sequenceStarts are the starts of every recorded sequence.
func (s *supervisor) sequenceStarts() []domain.Offsets {
	var starts []domain.Offsets
	for _, g := range s.sortedGroups() {
		for _, q := range s.c.Groups[g].Sequences {
			starts = append(starts, q.Start)
		}
	}
	return starts
}

// setLatest records the partitions' latest offsets as read from Kafka now.
func (s *supervisor) setLatest(ctx workflow.Context, latest domain.Offsets) {
	s.c.Latest, s.c.LatestAt = latest, now(ctx)
}

// Search attribute keys the supervisor keeps current.
var (
	saSupervisor = temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeSupervisor)
	saDataSource = temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeDataSource)
	saTopic      = temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeTopic)
	saState      = temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeState)
)

// publishVisibility shows progress in the Temporal UI without a query: the
// search attributes when the state changed, and the current details.
func (s *supervisor) publishVisibility(ctx workflow.Context) {
	if s.c.State != s.visible {
		err := workflow.UpsertTypedSearchAttributes(ctx,
			saSupervisor.ValueSet(s.spec.ID), saDataSource.ValueSet(s.spec.DataSchema.DataSource),
			saTopic.ValueSet(s.spec.IOConfig.Source()), saState.ValueSet(s.c.State))
		if err != nil {
			workflow.GetLogger(ctx).Warn("upsert search attributes", "error", err)
		}
		s.visible = s.c.State
	}
	workflow.SetCurrentDetails(ctx, s.details())
}

// detailsGroups bounds the groups the details list, so that they stay
// short enough for the panel (starter status lists them all).
const detailsGroups = 8

// details is a short markdown summary for the Temporal UI's Current
// Details, figures as in starter status. The UI sizes its panel to the
// rendered body's scrollHeight + 2px, which leaves out the margins above
// the first block and below the last (about 30px): the closing paragraph of
// a lone no-break space takes that cut, so the real last line shows whole
// (make test-ui checks it).
func (s *supervisor) details() string {
	st := s.status()
	var b strings.Builder
	state := "**" + st.State + "**"
	if st.DetailedState != "" && st.DetailedState != st.State {
		state += " (" + st.DetailedState + ")"
	}
	fmt.Fprintf(&b, "%s · topic `%s` → datasource `%s` · lag %d · unpublished %d · %s\n\n", state, st.Topic, st.DataSource, st.Lag, st.Unpublished, st.IsolationLevel)
	fmt.Fprintf(&b, "| group | gen | partitions | open sequence | rows | publishing |\n|---|---|---|---|---|---|\n")
	for i, g := range st.Groups {
		if i == detailsGroups {
			fmt.Fprintf(&b, "| … | | %d more groups: `starter status %s` | | | |\n", len(st.Groups)-i, st.ID)
			break
		}
		open, rows, publishing := "-", int64(0), 0
		for _, q := range g.Sequences {
			if q.Open() {
				open, rows = fmt.Sprintf("s%d from %s", q.ID, q.Start), q.Rows
			} else {
				publishing++
			}
		}
		fmt.Fprintf(&b, "| %d | %d | %v | %s | %d | %d |\n", g.Group, g.Generation, g.Partitions, open, rows, publishing)
	}
	p := st.Published
	fmt.Fprintf(&b, "\npublished %d sequences, %d segments, %d rows", p.Sequences, p.Segments, p.Rows)
	if !p.LastAt.IsZero() {
		fmt.Fprintf(&b, ", last at %s", p.LastAt.UTC().Format(time.TimeOnly))
	}
	b.WriteString("\n\n")
	for _, g := range st.Groups {
		if o := g.OutOfRange; o != nil {
			fmt.Fprintf(&b, "**offset out of range**: group %d, partition %d wants offset %d, which holds %d to %d; %s\n\n", g.Group, o.Partition, o.Offset, o.Earliest, o.Latest, o.Advice())
		}
	}
	if n := len(st.OffsetResets); n > 0 {
		fmt.Fprintf(&b, "last offset reset (%s): %s\n\n", st.OffsetResets[n-1].Time.Format(time.RFC3339), st.OffsetResets[n-1].Message)
	}
	if a := st.Autoscaler; a != nil {
		fmt.Fprintf(&b, "%s\n\n", a)
	}
	if line := TopicsLine(st); line != "" {
		fmt.Fprintf(&b, "%s\n\n", line)
	}
	for i, h := range st.Held {
		if i == detailsGroups {
			fmt.Fprintf(&b, "… and %d more partitions held: `starter status %s`\n\n", len(st.Held)-i, st.ID)
			break
		}
		fmt.Fprintf(&b, "**held by an open transaction**: %s\n\n", h)
	}
	if n := len(st.RecentErrors); n > 0 {
		fmt.Fprintf(&b, "last error: %s\n\n", st.RecentErrors[n-1].Message)
	}
	b.WriteString("lag = latest − current offset · unpublished = current − committed")
	if !st.LatestAt.IsZero() {
		fmt.Fprintf(&b, " · latest read at %s", st.LatestAt.UTC().Format(time.TimeOnly))
	}
	b.WriteString("\n\n\u00a0\n")
	return b.String()
}
