package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// A task group that records streamConsumeVersion reads with one
// ConsumeStream at a time. The stream returns by itself when a handoff
// trigger holds or it read to a closed sequence's end; when the group must
// act for another reason (a checkpoint, a stop, a rollover, new partitions,
// a continue-as-new) it wakes the stream through WakeConsume, a local
// activity: one marker in the history, and the stream hears of it within
// milliseconds on whichever worker it runs. Should the wake fail, the
// group cancels the stream, which reaches it with its next heartbeat.

// streamState is the task group's part of the stream protocol.
type streamState struct {
	stream     bool // the run records streamConsumeVersion
	streams    int  // streams started by this run, for their activity ids
	wakeKey    string
	cancel     workflow.CancelFunc // of the in-flight stream
	woken      bool                // the in-flight stream was asked to return
	waking     workflow.Future     // the WakeConsume in flight
	partsAdded bool                // partitions joined the open sequence since the stream started
	stoppedAt  time.Time           // when the last stream stopped reading (zero: none known)
	// requestCancel cancels the re-send timer of a checkpoint request.
	requestCancel workflow.CancelFunc
}

// planStream starts a stream into target from the group's position.
func (g *taskGroup) planStream(ctx workflow.Context, target *groupSequence, from, until domain.Offsets) {
	g.streams++
	id := fmt.Sprintf("stream-%d", g.streams)
	info := workflow.GetInfo(ctx)
	key := info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + id
	o := withStreamRetryTimeout(streamOptions, g.in.Spec)
	o.ActivityID = id
	o.Summary = fmt.Sprintf("stream g%d s%d %s", g.in.Group, target.ID, span(from, until))
	in := protocol.ConsumeStreamInput{
		Spec: g.in.Spec, Group: g.in.Group,
		SequenceName: domain.SequenceName(g.in.Spec.ID, g.in.Group, target.ID),
		From:         from, Until: until, ParseExceptions: g.parseExceptions,
		WakeKey: key, MaxRun: streamMaxRun, PreviousStopped: g.stoppedAt,
		QuietAfter: max(2*g.in.Spec.TuningConfig.ChunkPeriod.D(), time.Second), MinRun: g.in.Spec.IOConfig.Period.D(),
	}
	if target == g.open() || target == g.early {
		var total int64
		for _, s := range g.seqs {
			total += s.Rows
		}
		in.Close = &protocol.CloseTriggers{
			OpenedAt: target.OpenedAt, Rows: target.Rows, Bytes: target.Bytes,
			OtherRows: total - target.Rows, Progressed: g.progressed(target),
		}
		if g.spread {
			in.Close.Spread, in.Close.Phase = true, g.handoffPhase()
			if in.Close.Progressed {
				in.Close.HandoffAt = g.handoffDue(target)
			}
		}
	}
	cctx, cancel := workflow.WithCancel(ctx)
	g.consumeSeq = target.ID
	g.consuming = workflow.ExecuteActivity(workflow.WithActivityOptions(cctx, o), protocol.ActivityConsumeStream, in)
	g.wakeKey, g.cancel, g.woken, g.partsAdded = key, cancel, false, false
}

// mustReturn: the in-flight stream has to end for the group to go on.
func (g *taskGroup) mustReturn() bool {
	if g.draining {
		return true
	}
	if g.early != nil && g.consumeSeq == g.early.ID {
		return g.stopping || g.rolloverTo != 0 || g.partsAdded
	}
	open := g.open()
	if open == nil || g.consumeSeq != open.ID {
		return false // reading a closed sequence to its end: it returns by itself
	}
	return g.wantClose != "" || g.stopping || g.rolloverTo != 0 || g.partsAdded
}

// wakeStream asks the in-flight stream to return once the group must act.
func (g *taskGroup) wakeStream(ctx workflow.Context) {
	if !g.stream || g.consuming == nil || g.woken || !g.mustReturn() {
		return
	}
	g.woken = true
	lctx := workflow.WithLocalActivityOptions(ctx, wakeOptions)
	g.waking = workflow.ExecuteLocalActivity(lctx, protocol.ActivityWakeConsume, protocol.WakeConsumeInput{Key: g.wakeKey})
}

// onWoken: a wake that could not be sent falls back on cancellation.
func (g *taskGroup) onWoken(ctx workflow.Context, f workflow.Future) {
	g.waking = nil
	if err := f.Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("wake of the stream failed; cancelling it instead", "stream", g.wakeKey, "error", err)
		if g.consuming != nil && g.cancel != nil {
			g.cancel()
		}
	}
}

// onStreamed takes in what a stream staged. A stream cancelled before it
// could answer staged nothing the group knows of: its position stands and
// the next stream reads those offsets again.
func (g *taskGroup) onStreamed(ctx workflow.Context, f workflow.Future) {
	g.consuming, g.cancel = nil, nil
	var res protocol.ConsumeStreamResult
	if err := f.Get(ctx, &res); err != nil {
		if temporal.IsCanceledError(err) {
			return
		}
		g.reportOutOfRange(ctx, err) // taskgroup_outofrange.go
		g.err = fmt.Errorf("consume group %d: %w", g.in.Group, err)
		return
	}
	g.stoppedAt = res.StoppedAt
	keys := make([]string, 0, len(res.Chunks))
	for _, c := range res.Chunks {
		keys = append(keys, c.Key)
	}
	g.took(ctx, res.To, keys, ReadTotals{Records: res.Records, Rows: res.Rows, Unparseable: res.Unparseable, ThrownAway: res.ThrownAway, NoValue: res.NoValue, Markers: res.Markers, Aborted: res.Aborted}, res.Bytes, res.FirstRecordAt)
	r := closeReason(res.Reason)
	// A stream that returns at a handoff trigger is followed by the
	// checkpoint request, which carries the report.
	carried := g.progressInRequest && r != ""
	if res.Records > 0 && !carried && workflow.Now(ctx).Sub(g.lastReportAt) >= g.in.Spec.IOConfig.Period.D() {
		g.reportProgress(ctx) // after a burst: streams return at most once a period unless there is work
	}
	switch {
	case r == "":
	case g.early != nil && g.consumeSeq == g.early.ID:
		g.earlyClose = r // it closes once adopted
	case g.wantClose == "" && g.open() != nil && g.consumeSeq == g.open().ID:
		g.wantClose = r
	}
}

// closeReason maps a stream's handoff trigger to the group's close reason.
func closeReason(streamReason string) string {
	switch streamReason {
	case protocol.StreamMaxRows:
		return ReasonMaxRows
	case protocol.StreamMaxBytes:
		return ReasonMaxSequenceBytes
	case protocol.StreamMaxTotalRows:
		return ReasonMaxTotalRows
	case protocol.StreamHandoffPeriod:
		return ReasonHandoff
	}
	return ""
}
