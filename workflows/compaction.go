package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// compactionOptions: a compaction heartbeats while it merges, so a dead
// worker is found within two minutes and the interval is retried
// elsewhere (its files overwritten, nothing committed twice). A conflict
// is non-retryable: the next round plans the interval again.
var compactionOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Hour,
	HeartbeatTimeout:    2 * time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 10,
		NonRetryableErrorTypes: []string{domain.ErrCompactionConflict, domain.ErrInvalidSpec, domain.ErrTableSchema},
	},
}

// retentionOptions: a retention pass drops in one transaction and kills
// file by file; a retry redoes what is left.
var retentionOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 10 * time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second, MaximumAttempts: 3,
		NonRetryableErrorTypes: []string{domain.ErrInvalidSpec},
	},
}

// maxRecentCompactions bounds the outcomes the status keeps.
const maxRecentCompactions = 10

// compactionRoundsPerRun: a run continues as new after this many rounds
// (or sooner when Temporal suggests it) once no compaction is running, so
// an idle datasource's history stays small.
const compactionRoundsPerRun = 500

// CompactionWorkflow keeps one datasource's segments compacted: every
// config period (and at once when woken) it plans a round, starts up to
// maxConcurrentCompactions interval compactions, and records how each
// ended; when one ends while more intervals wait, it plans again. A stop
// signal lets the running ones finish and completes it.
func CompactionWorkflow(ctx workflow.Context, in CompactionInput) error {
	c := &compaction{st: CompactionStatus{DataSource: in.DataSource}, running: map[string]CompactionRun{}}
	c.searchable = workflow.GetVersion(ctx, compactionStateChange, workflow.DefaultVersion, compactionStateVersion) >= compactionStateVersion
	if in.Carry != nil {
		c.st = *in.Carry
		c.st.Running = nil
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (CompactionStatus, error) { return c.status(), nil }); err != nil {
		return err
	}
	wake := workflow.GetSignalChannel(ctx, SignalCompactionWake)
	stop := workflow.GetSignalChannel(ctx, SignalStop)
	done := workflow.NewBufferedChannel(ctx, 64)
	rounds := 0
	for {
		// Before the first plan the slots are unknown: plan anyway.
		if !c.st.Stopping && (len(c.running) < c.slots() || !c.st.HasConfig) {
			c.round(ctx, done)
			rounds++
		}
		c.publish(ctx)
		if len(c.running) == 0 && (c.st.Stopping || rounds >= compactionRoundsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			break
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(wake, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil) })
		sel.AddReceive(stop, func(ch workflow.ReceiveChannel, _ bool) {
			ch.Receive(ctx, nil)
			c.st.Stopping = true
		})
		sel.AddReceive(done, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil) })
		timerCtx, cancel := workflow.WithCancel(ctx)
		if !c.st.Stopping {
			c.st.NextRound = workflow.Now(ctx).Add(c.period())
			sel.AddFuture(workflow.NewTimer(timerCtx, c.period()), func(workflow.Future) {})
		}
		sel.Select(ctx)
		cancel()
	}
	// A stop that came while this run was deciding to continue as new
	// must not be left behind in it.
	for stop.ReceiveAsync(nil) {
		c.st.Stopping = true
	}
	for wake.ReceiveAsync(nil) { // the next run plans at once anyway
	}
	if c.st.Stopping {
		return nil
	}
	carry := c.status()
	return workflow.NewContinueAsNewError(ctx, CompactionWorkflowName, CompactionInput{DataSource: in.DataSource, Carry: &carry})
}

// compaction is a compaction workflow's state.
type compaction struct {
	st      CompactionStatus
	running map[string]CompactionRun // by name
	// searchable: this run keeps the search attributes current (runs
	// started before compactionStateChange do not); visible is the state
	// they show.
	searchable bool
	visible    string
}

func (c *compaction) slots() int { return max(c.st.Config.MaxConcurrentCompactions, 1) }

func (c *compaction) period() time.Duration {
	if p := c.st.Config.Period.D(); p > 0 {
		return p
	}
	return domain.DefaultCompactionPeriod
}

// round applies the retention rules, then plans and starts compactions
// for the free slots; each sends its name on done when it has ended and
// been recorded.
func (c *compaction) round(ctx workflow.Context, done workflow.Channel) {
	var starts []time.Time
	for _, r := range c.running {
		starts = append(starts, r.Start)
	}
	slices.SortFunc(starts, time.Time.Compare)
	var ret protocol.ApplyRetentionResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, retentionOptions), protocol.ActivityApplyRetention,
		protocol.ApplyRetentionInput{DataSource: c.st.DataSource}).Get(ctx, &ret)
	if err != nil {
		c.recordError(ctx, "retention: "+errorMessage(err))
	} else {
		c.st.HasRetention, c.st.RetentionVersion = ret.HasRules, ret.Version
		c.st.Dropped += int64(ret.Dropped)
		c.st.Killed, c.st.KilledBytes = c.st.Killed+int64(ret.Killed), c.st.KilledBytes+ret.KilledBytes
		c.st.Swept, c.st.SweptBytes = c.st.Swept+int64(ret.Swept), c.st.SweptBytes+ret.SweptBytes
	}
	var plan protocol.CompactionPlanResult
	err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, supervisorOptions), protocol.ActivityCompactionPlan,
		protocol.CompactionPlanInput{DataSource: c.st.DataSource, Running: starts}).Get(ctx, &plan)
	c.st.Rounds++
	c.st.LastRound = workflow.Now(ctx)
	if err != nil {
		c.recordError(ctx, "plan: "+errorMessage(err))
		return
	}
	c.st.HasConfig, c.st.Config, c.st.ConfigVersion = plan.HasConfig, plan.Config, plan.ConfigVersion
	c.st.Pending, c.st.UsedSegments = plan.Pending, plan.UsedSegments
	for _, t := range plan.Tasks {
		if len(c.running) >= c.slots() {
			break
		}
		c.st.Started++
		name := fmt.Sprintf("compaction_%s_%d", workflow.Now(ctx).UTC().Format("20060102T150405Z"), c.st.Started)
		run := CompactionRun{Name: name, Start: t.Start, End: t.End, Segments: len(t.SegmentIDs), Rows: t.Rows, Bytes: t.Bytes, StartedAt: workflow.Now(ctx)}
		c.running[name] = run
		fut := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, compactionOptions), protocol.ActivityCompactInterval,
			protocol.CompactIntervalInput{DataSource: c.st.DataSource, Name: name, Task: t, Config: plan.Config})
		workflow.Go(ctx, func(ctx workflow.Context) {
			var res protocol.CompactIntervalResult
			err := fut.Get(ctx, &res)
			c.finish(ctx, run, res, err)
			done.Send(ctx, name)
		})
	}
}

// finish records how a compaction ended.
func (c *compaction) finish(ctx workflow.Context, run CompactionRun, res protocol.CompactIntervalResult, err error) {
	delete(c.running, run.Name)
	out := CompactionOutcome{CompactionRun: run, Result: CompactionDone, SegmentsOut: res.SegmentsOut, BytesOut: res.BytesOut, EndedAt: workflow.Now(ctx)}
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		c.st.Done++
		c.st.SegmentsIn += int64(res.SegmentsIn)
		c.st.SegmentsOut += int64(res.SegmentsOut)
		c.st.RowsIn, c.st.RowsOut = c.st.RowsIn+res.RowsIn, c.st.RowsOut+res.RowsOut
		c.st.BytesIn, c.st.BytesOut = c.st.BytesIn+res.BytesIn, c.st.BytesOut+res.BytesOut
	case errors.As(err, &appErr) && appErr.Type() == domain.ErrCompactionConflict:
		c.st.Conflicts++
		out.Result, out.Error = CompactionConflict, errorMessage(err)
	default:
		c.st.Failed++
		out.Result, out.Error = CompactionFailed, errorMessage(err)
		c.recordError(ctx, run.Name+": "+errorMessage(err))
	}
	c.st.Recent = append(c.st.Recent, out)
	if n := len(c.st.Recent); n > maxRecentCompactions {
		c.st.Recent = c.st.Recent[n-maxRecentCompactions:]
	}
}

func (c *compaction) recordError(ctx workflow.Context, msg string) {
	workflow.GetLogger(ctx).Warn("compaction error", "error", msg)
	c.st.RecentErrors = append(c.st.RecentErrors, ErrorRecord{Time: workflow.Now(ctx), Message: msg})
	if n := len(c.st.RecentErrors); n > maxRecentErrors {
		c.st.RecentErrors = c.st.RecentErrors[n-maxRecentErrors:]
	}
}

// status is the state with the running compactions, oldest first.
func (c *compaction) status() CompactionStatus {
	st := c.st
	st.Running = nil
	for _, r := range c.running {
		st.Running = append(st.Running, r)
	}
	slices.SortFunc(st.Running, func(a, b CompactionRun) int { return strings.Compare(a.Name, b.Name) })
	return st
}

// state is what the CompactionState search attribute shows.
func (c *compaction) state() string {
	switch {
	case c.st.Stopping:
		return domain.CompactionStateStopping
	case !c.st.HasConfig:
		return domain.CompactionStateNoConfig
	case len(c.running) > 0:
		return domain.CompactionStateCompacting
	}
	return domain.CompactionStateIdle
}

var saCompactionState = temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeCompactionState)

// publish shows the state in the Temporal UI: the search attributes when
// the state changed (a few events per round that compacts, none while
// idle), and the current details.
func (c *compaction) publish(ctx workflow.Context) {
	if state := c.state(); c.searchable && state != c.visible {
		err := workflow.UpsertTypedSearchAttributes(ctx, saDataSource.ValueSet(c.st.DataSource), saCompactionState.ValueSet(state))
		if err != nil {
			workflow.GetLogger(ctx).Warn("upsert search attributes", "error", err)
		}
		c.visible = state
	}
	st := c.status()
	var b strings.Builder
	state := c.state()
	if state == domain.CompactionStateNoConfig {
		state = "no config (starter compaction set)"
	}
	fmt.Fprintf(&b, "**%s** · datasource `%s` · config v%d · %d used segments · %d intervals pending · %d running\n\n",
		state, st.DataSource, st.ConfigVersion, st.UsedSegments, st.Pending, len(st.Running))
	if st.HasRetention {
		fmt.Fprintf(&b, "retention rules v%d · %d segments dropped\n\n", st.RetentionVersion, st.Dropped)
	}
	if st.Killed > 0 || st.Swept > 0 {
		fmt.Fprintf(&b, "killed %d unused segments' files (%d bytes) · swept %d orphaned files (%d bytes)\n\n", st.Killed, st.KilledBytes, st.Swept, st.SweptBytes)
	}
	fmt.Fprintf(&b, "done %d (segments %d → %d, bytes %d → %d) · conflicts %d · failed %d\n",
		st.Done, st.SegmentsIn, st.SegmentsOut, st.BytesIn, st.BytesOut, st.Conflicts, st.Failed)
	workflow.SetCurrentDetails(ctx, b.String())
}
