package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// plan starts whatever the state calls for: a checkpoint request, a publish,
// a consume. It never blocks on an activity.
func (g *taskGroup) plan(ctx workflow.Context) {
	g.wakeStream(ctx) // taskgroup_stream.go
	if g.draining {
		return
	}
	g.checkTriggers(ctx)
	g.planRequest(ctx)
	g.planPublish(ctx)
	g.planConsume(ctx)
}

// checkTriggers closes the open sequence when it holds maxRowsPerSegment
// rows, when the group holds maxTotalRows unpublished rows, or when it is
// older than intermediateHandoffPeriod.
func (g *taskGroup) checkTriggers(ctx workflow.Context) {
	open := g.open()
	if open == nil || g.wantClose != "" || !g.progressed(open) {
		return
	}
	tc := g.in.Spec.TuningConfig
	var total int64
	for _, s := range g.seqs {
		total += s.Rows
	}
	switch {
	case open.Rows >= tc.MaxRowsPerSegment:
		g.wantClose = ReasonMaxRows
	case open.Bytes >= tc.MaxSequenceBytes:
		g.wantClose = ReasonMaxSequenceBytes
	case total >= tc.MaxTotalRows:
		g.wantClose = ReasonMaxTotalRows
	case tc.IntermediateHandoffPeriod > 0 && !workflow.Now(ctx).Before(g.handoffDue(open)):
		g.wantClose = ReasonHandoff
	}
}

// handoffDue is when the progressed sequence s hands off by age: on the
// group's phase of the period, counted from its first read, or (a run from
// before spreadHandoffVersion) a period after it opened.
func (g *taskGroup) handoffDue(s *groupSequence) time.Time {
	period := g.in.Spec.TuningConfig.IntermediateHandoffPeriod.D()
	if !g.spread {
		return s.OpenedAt.Add(period)
	}
	first := s.FirstReadAt
	if first.IsZero() {
		first = s.OpenedAt // carried from a run that did not record it
	}
	return domain.HandoffDue(first, period, g.handoffPhase())
}

// handoffPhase is the group's stable phase of the handoff period.
func (g *taskGroup) handoffPhase() time.Duration {
	return domain.HandoffPhase(g.in.Spec.ID, g.in.Group, g.in.Spec.TuningConfig.IntermediateHandoffPeriod.D())
}

// planRequest asks the supervisor to close the open sequence at the current
// position, once no consume is in flight (so the position is final), and
// opens its successor early (taskgroup_early.go). A request re-sent while
// the early sequence is read asks for the same offsets.
func (g *taskGroup) planRequest(ctx workflow.Context) {
	open := g.open()
	if g.wantClose == "" || g.requested || open == nil {
		return
	}
	if g.early != nil {
		g.request(ctx, open, subset(g.early.Start, open.Start.Partitions()))
		return
	}
	if g.consuming != nil || !g.pos.Reached(open.Start) {
		return // nothing to close yet, or restored sequences are still being read
	}
	if !g.progressed(open) {
		// An empty sequence is never published: nothing to close.
		if g.wantClose == ReasonUser {
			g.signalSupervisor(ctx, SignalCheckpointDeclined, CheckpointDeclined{Group: g.in.Group, Generation: g.in.Generation})
		}
		if g.wantClose != ReasonStop {
			g.wantClose = ""
		}
		return
	}
	end := subset(g.pos, open.Start.Partitions())
	if g.closesItself() {
		g.closeItself(ctx, open, end) // taskgroup_selfclose.go
		return
	}
	g.openEarly(ctx, end)
	g.request(ctx, open, end)
}

// request sends the request to close open at end.
func (g *taskGroup) request(ctx workflow.Context, open *groupSequence, end domain.Offsets) {
	req := CheckpointRequest{
		Group: g.in.Group, Generation: g.in.Generation, SequenceID: open.ID,
		Offsets: end, Reason: g.wantClose,
	}
	if g.progressInRequest {
		p := g.progress() // one signal instead of two
		req.Progress = &p
	} else {
		g.reportProgress(ctx)
	}
	if g.early != nil {
		req.NextSequenceID = g.early.ID
	}
	req.ClosedByGroup = g.closedUnpublished() // taskgroup_selfclose.go
	g.signalSupervisor(ctx, SignalCheckpointRequest, req)
	if g.progressInRequest {
		g.reported(ctx)
	}
	g.requested = true
	if g.stream {
		// Cancelled when the answer comes, so it costs no wake-up then.
		tctx, cancel := workflow.WithCancel(ctx)
		g.requestAt, g.requestCancel = workflow.NewTimer(tctx, requestResendAfter), cancel
		return
	}
	g.requestAt = workflow.NewTimer(ctx, requestResendAfter)
}

// planPublish publishes the oldest closed sequence once it is fully read.
// Publishes of one group commit in sequence order, one at a time.
func (g *taskGroup) planPublish(ctx workflow.Context) {
	if g.publishing != nil || len(g.seqs) == 0 {
		return
	}
	s := g.seqs[0]
	if s.Open() || !g.pos.Reached(s.End) {
		return
	}
	o := withRetryTimeout(publishOptions, g.in.Spec)
	o.Summary = fmt.Sprintf("publish g%d s%d: %d rows, %s", g.in.Group, s.ID, s.Rows, span(s.Start, s.End))
	actx := workflow.WithActivityOptions(ctx, o)
	notice := g.publishNotice(ctx, s) // taskgroup_selfclose.go
	g.notifying = notice != nil
	g.publishing = workflow.ExecuteActivity(actx, protocol.ActivityPublish, protocol.PublishInput{
		Spec: g.in.Spec, Group: g.in.Group, SequenceID: s.ID,
		Start: s.Start, End: s.End, StagingKeys: s.Chunks, ClosedAt: s.ClosedAt,
		Notify: notice,
	})
}

// planConsume reads the next chunk: into the first closed sequence not yet
// read to its end, else into the open sequence unless the group waits for
// an answer, is closing it, or has too many sequences waiting to publish.
func (g *taskGroup) planConsume(ctx workflow.Context) {
	if g.consuming != nil {
		return
	}
	target, until := g.consumeTarget()
	if target == nil {
		return
	}
	from := subset(g.pos, target.Start.Partitions())
	if g.stream {
		g.planStream(ctx, target, from, until)
		return
	}
	o := withRetryTimeout(consumeOptions, g.in.Spec)
	o.Summary = fmt.Sprintf("consume g%d s%d %s", g.in.Group, target.ID, span(from, until))
	actx := workflow.WithActivityOptions(ctx, o)
	g.consumeSeq = target.ID
	g.consuming = workflow.ExecuteActivity(actx, protocol.ActivityConsume, protocol.ConsumeInput{
		Spec: g.in.Spec, Group: g.in.Group,
		SequenceName: domain.SequenceName(g.in.Spec.ID, g.in.Group, target.ID),
		From:         from, Until: until,
		ParseExceptions: g.parseExceptions,
	})
}

func (g *taskGroup) consumeTarget() (*groupSequence, domain.Offsets) {
	closed := 0
	for _, s := range g.seqs {
		if s.Open() {
			break
		}
		if !g.pos.Reached(s.End) {
			return s, s.End
		}
		closed++
	}
	if e := g.early; e != nil && g.earlyClose == "" && !g.stopping && g.rolloverTo == 0 {
		return e, nil // the open sequence's successor, while its close is recorded
	}
	open := g.open()
	if open == nil || g.requested || g.stopping || g.wantClose != "" || g.rolloverTo != 0 || closed >= g.in.Spec.TuningConfig.MaxPendingPublishes {
		return nil, nil
	}
	return open, nil
}

func (g *taskGroup) onConsumed(ctx workflow.Context, f workflow.Future) {
	g.consuming = nil
	var res protocol.ConsumeResult
	if err := f.Get(ctx, &res); err != nil {
		g.reportOutOfRange(ctx, err) // taskgroup_outofrange.go
		g.err = fmt.Errorf("consume group %d: %w", g.in.Group, err)
		return
	}
	var keys []string
	if res.StagingKey != "" {
		keys = []string{res.StagingKey}
	}
	g.took(ctx, res.To, keys, ReadTotals{Records: res.Records, Rows: res.Rows, Unparseable: res.Unparseable, ThrownAway: res.ThrownAway, NoValue: res.NoValue, Markers: res.Markers, Aborted: res.Aborted}, res.Bytes, time.Time{})
	if workflow.Now(ctx).Sub(g.lastReportAt) >= g.in.Spec.IOConfig.Period.D() {
		g.reportProgress(ctx)
	}
}

// took records what a consume read into the sequence it read for: the
// position, the staged chunks, and the counts.
// firstRead, when known, is when the consume read its first record.
func (g *taskGroup) took(ctx workflow.Context, to domain.Offsets, keys []string, read ReadTotals, bytes int64, firstRead time.Time) {
	for p, o := range to {
		g.pos[p] = o
	}
	if s := g.sequence(g.consumeSeq); s != nil {
		if s.FirstReadAt.IsZero() && g.progressed(s) {
			s.FirstReadAt = firstRead
			if firstRead.IsZero() {
				s.FirstReadAt = workflow.Now(ctx)
			}
		}
		s.Chunks = append(s.Chunks, keys...)
		s.Rows += read.Rows
		s.Bytes += bytes
	}
	g.report.Add(read)
	g.parseExceptions += read.Unparseable
}

func (g *taskGroup) onPublished(ctx workflow.Context, f workflow.Future) {
	g.publishing = nil
	var res protocol.PublishResult
	if err := f.Get(ctx, &res); err != nil {
		g.err = fmt.Errorf("publish group %d sequence %d: %w", g.in.Group, g.seqs[0].ID, err)
		return
	}
	s := g.seqs[0]
	g.seqs = g.seqs[1:]
	if g.notifying {
		return // the Publish told the supervisor
	}
	g.signalSupervisor(ctx, SignalSequencePublished, SequencePublished{
		Group: g.in.Group, Generation: g.in.Generation, SequenceID: s.ID,
		End: s.End, Segments: len(res.SegmentIDs), Rows: res.Rows,
	})
}

// span renders offsets as "p0:1200→5400 p2:880→" (no end: open-ended).
func span(from, to domain.Offsets) string {
	var b strings.Builder
	for i, p := range from.Partitions() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d→", p.Label(), from[p])
		if e, ok := to[p]; ok {
			fmt.Fprintf(&b, "%d", e)
		}
	}
	return b.String()
}
