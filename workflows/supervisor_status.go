package workflows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// status builds the answer to QueryStatus.
func (s *supervisor) status() SupervisorStatus {
	st := SupervisorStatus{
		ID: s.spec.ID, DataSource: s.spec.DataSchema.DataSource, Topic: s.spec.IOConfig.Topic,
		State: s.c.State, DetailedState: s.c.DetailedState, Spec: s.spec, PendingSpec: s.c.PendingSpec != nil,
		Partitions: slices.Clone(s.c.Partitions),
		Committed:  s.c.Committed.Clone(), Current: s.c.Current.Clone(), Latest: s.c.Latest.Clone(),
		PartitionLag: s.partitionLag(), Read: s.c.Read,
		Published: s.c.Published, RecentErrors: slices.Clone(s.c.RecentErrors),
		OffsetResets: slices.Clone(s.c.OffsetResets),
	}
	for _, l := range st.PartitionLag {
		st.Lag += l
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

// partitionLag is latest minus committed or, before a partition's first
// publish, minus where its group started reading.
func (s *supervisor) partitionLag() map[int32]int64 {
	base := domain.Offsets{}
	for _, rec := range s.c.Groups {
		// A partition starts in the first sequence that holds it.
		for _, q := range rec.Sequences {
			for p, o := range q.Start {
				if _, ok := base[p]; !ok {
					base[p] = o
				}
			}
		}
	}
	for p, o := range s.c.Committed {
		base[p] = o
	}
	lag := map[int32]int64{}
	for p, latest := range s.c.Latest {
		if b, ok := base[p]; ok {
			lag[p] = max(latest-b, 0)
		}
	}
	return lag
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
			saTopic.ValueSet(s.spec.IOConfig.Topic), saState.ValueSet(s.c.State))
		if err != nil {
			workflow.GetLogger(ctx).Warn("upsert search attributes", "error", err)
		}
		s.visible = s.c.State
	}
	workflow.SetCurrentDetails(ctx, s.details())
}

// details is a short markdown summary for the Temporal UI.
func (s *supervisor) details() string {
	st := s.status()
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** (%s) · topic `%s` → datasource `%s` · lag %d · published %d sequences, %d segments, %d rows\n\n",
		st.State, st.DetailedState, st.Topic, st.DataSource, st.Lag, st.Published.Sequences, st.Published.Segments, st.Published.Rows)
	fmt.Fprintf(&b, "| group | gen | partitions | open sequence | rows | publishing |\n|---|---|---|---|---|---|\n")
	for _, g := range st.Groups {
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
	for _, g := range st.Groups {
		if o := g.OutOfRange; o != nil {
			fmt.Fprintf(&b, "\n\n**offset out of range**: group %d, partition %d wants offset %d, which holds %d to %d; %s", g.Group, o.Partition, o.Offset, o.Earliest, o.Latest, o.Advice())
		}
	}
	if n := len(st.OffsetResets); n > 0 {
		fmt.Fprintf(&b, "\n\nlast offset reset (%s): %s", st.OffsetResets[n-1].Time.Format(time.RFC3339), st.OffsetResets[n-1].Message)
	}
	if n := len(st.RecentErrors); n > 0 {
		fmt.Fprintf(&b, "\n\nlast error: %s", st.RecentErrors[n-1].Message)
	}
	return b.String()
}
