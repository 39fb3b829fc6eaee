package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/lagview"
	"handoff/internal/protocol"
)

// A supervisor that records watchVersion has no period timer. One Watch
// activity looks at partitions, Kafka, the groups and their read
// positions every period on a worker, and returns only when what it sees
// differs from what the supervisor knows; the supervisor then acts on the
// change and starts the next watch with what it now knows. A timer is set
// only while something is due: a group's restart after its back-off, a
// rollover after taskDuration, or a retry of a step that failed.

// watchState is the supervisor's part of the watch protocol (not carried:
// a new run starts a new watch).
type watchState struct {
	watch      bool
	watching   workflow.Future // the Watch in flight, or nil
	cancel     workflow.CancelFunc
	watchSeq   int    // watches started by this run
	watchTopic string // the topic (or /pattern/) the watch in flight looks at
	// watchTaskCount is the task count the watch in flight judges lag for.
	watchTaskCount int
	// startedIn[g] is the watch in flight when group g last started: what
	// that watch says of g predates the start.
	startedIn map[int]int
	// retrySoon: a step failed; try again after a period.
	retrySoon bool
	due       workflow.Future // the timer of dueAt
	dueAt     time.Time
	dueCancel workflow.CancelFunc
}

// WatchedState is what the supervisor last learned from a watch, carried
// across continue-as-new.
type WatchedState struct {
	Problem     string `json:"problem,omitempty"`
	ProblemType string `json:"problemType,omitempty"`
	CaughtUp    bool   `json:"caughtUp,omitempty"`
	// Held are the partitions an open transaction has held for a while.
	Held []domain.HeldPartition `json:"held,omitempty"`
	// Registry is why the groups' reads wait for the schema registry, ""
	// when they do not (protocol.WatchView.Registry).
	Registry string `json:"registry,omitempty"`
}

// runWatched is the supervisor's loop in the watch design.
func (s *supervisor) runWatched(ctx workflow.Context, sig supervisorSignals) error {
	for {
		s.reconcileWatched(ctx)
		s.publishVisibility(ctx)
		if s.stopped() {
			return s.complete(ctx, sig)
		}
		s.ensureWatch(ctx)
		s.waitChange(ctx, sig)
		s.drain(ctx, sig)
		if s.stopped() {
			return s.complete(ctx, sig)
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() && workflow.AllHandlersFinished(ctx) {
			return s.continueAsNew(ctx, sig)
		}
	}
}

// reconcileWatched is reconcile with what the watches reported instead of
// a Discover and a GroupStates.
func (s *supervisor) reconcileWatched(ctx workflow.Context) {
	_ = workflow.Await(ctx, func() bool { return !s.resetting })
	s.reconciling = true
	defer func() { s.reconciling = false }()
	s.retrySoon = false
	s.recordSpecOnce(ctx)
	if w := s.c.Watched; w != nil && w.Problem != "" {
		s.unhealthyState(w.ProblemType)
		s.settleDrain(ctx) // groups may finish without Kafka
		return
	}
	if len(s.c.Groups) == 0 && !s.draining() {
		s.updateState(ctx) // the first watch has not reported yet
		return
	}
	s.steer(ctx)
}

// unhealthyState shows why the topic cannot be read (problemType:
// domain.ErrTopicNotFound, or "" for other errors); not while draining.
func (s *supervisor) unhealthyState(problemType string) {
	if s.draining() {
		return
	}
	s.c.State = StateUnhealthySupervisor
	switch {
	case problemType == domain.ErrTopicNotFound:
		s.c.DetailedState = "TOPIC_NOT_FOUND"
	case s.c.Connected:
		s.c.DetailedState = "LOST_CONTACT_WITH_STREAM"
	default:
		s.c.DetailedState = "UNABLE_TO_CONNECT_TO_STREAM"
	}
}

// known is what the supervisor believes, for the next watch to compare.
func (s *supervisor) known() protocol.WatchView {
	v := protocol.WatchView{Partitions: s.c.Partitions, Groups: map[string]bool{}}
	if w := s.c.Watched; w != nil {
		v.Problem, v.ProblemType, v.CaughtUp, v.Held, v.Registry = w.Problem, w.ProblemType, w.CaughtUp, w.Held, w.Registry
	}
	for g, rec := range s.c.Groups {
		v.Groups[TaskGroupWorkflowID(s.spec.ID, g)] = rec.Running
	}
	return v
}

// ensureWatch starts a watch unless one looks at the spec's topic already.
func (s *supervisor) ensureWatch(ctx workflow.Context) {
	// The task count matters only to the autoscaler: a run without one
	// keeps its watch through a taskCount change, as runs before it did.
	sameCount := s.watchTaskCount == s.spec.IOConfig.TaskCount || !s.spec.IOConfig.AutoScalerOn()
	if s.watching != nil && s.watchTopic == s.spec.IOConfig.Source() && sameCount {
		return
	}
	if s.watching != nil {
		s.cancel() // its topic or task count changed with the spec
	}
	s.watchSeq++
	wctx, cancel := workflow.WithCancel(ctx)
	o := watchOptions
	o.Summary = fmt.Sprintf("watch %s: partitions, groups, lag", s.spec.IOConfig.Source())
	in := protocol.WatchInput{
		SupervisorID: s.spec.ID, DataSource: s.spec.DataSchema.DataSource, Topic: s.sourceTopic(), TopicPattern: s.sourcePattern(),
		Every: s.spec.IOConfig.Period.D(), MaxRun: watchMaxRun, Known: s.known(),
		Starts:     lagview.Base(nil, s.sequenceStarts()...),
		AutoScaler: s.watchAutoScaler(ctx),
	}
	if s.retrySoon {
		in.FirstLookAfter = s.spec.IOConfig.Period.D()
	}
	s.watching = workflow.ExecuteActivity(workflow.WithActivityOptions(wctx, o), protocol.ActivityWatch, in)
	s.cancel, s.watchTopic, s.watchTaskCount = cancel, s.spec.IOConfig.Source(), s.spec.IOConfig.TaskCount
}

// waitChange handles signals until the watch reports, something is due,
// something asks for a reconcile, or a drain completes.
func (s *supervisor) waitChange(ctx workflow.Context, sig supervisorSignals) {
	wasDrained := s.drained()
	seq := s.watchSeq
	for done := false; !done; {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(s.watching, func(f workflow.Future) {
			s.onWatched(ctx, f, seq)
			done = true
		})
		if due := s.dueTimer(ctx); due != nil {
			sel.AddFuture(due, func(workflow.Future) {
				s.due, s.dueCancel, s.dueAt = nil, nil, time.Time{}
				done = true
			})
		}
		sel.AddReceive(s.wake, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			done = true
		})
		s.addSignals(ctx, sel, sig)
		sel.Select(ctx)
		if !wasDrained && s.drained() {
			done = true // apply a spec, suspend or stop without waiting
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			done = true // signals alone can grow the history: go on as new
		}
	}
}

// dueTimer keeps one timer for the earliest thing due, or none.
func (s *supervisor) dueTimer(ctx workflow.Context) workflow.Future {
	at := s.nextDue(ctx)
	if s.due != nil && at.Equal(s.dueAt) {
		return s.due
	}
	if s.dueCancel != nil {
		s.dueCancel()
	}
	s.due, s.dueCancel, s.dueAt = nil, nil, at
	if at.IsZero() {
		return nil
	}
	tctx, cancel := workflow.WithCancel(ctx)
	s.due, s.dueCancel = workflow.NewTimer(tctx, max(at.Sub(now(ctx)), time.Millisecond)), cancel
	return s.due
}

// nextDue is when the supervisor must look again without being told: a
// group's restart, a rollover, a retry. Zero: nothing is due.
func (s *supervisor) nextDue(ctx workflow.Context) time.Time {
	var at time.Time
	earliest := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	period := s.spec.IOConfig.Period.D()
	if s.retrySoon {
		earliest(now(ctx).Add(period))
	}
	for _, rec := range s.c.Groups {
		switch {
		case !rec.Running && !rec.Finished && (!s.draining() || hasClosed(rec)):
			earliest(later(rec.RetryAt, now(ctx)))
		case rec.Running && rec.RollingTo == 0 && s.spec.IOConfig.TaskDuration > 0 && !s.draining():
			earliest(rec.StartedAt.Add(s.spec.IOConfig.TaskDuration.D()))
		}
	}
	return at
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// onWatched takes in a watch's report.
func (s *supervisor) onWatched(ctx workflow.Context, f workflow.Future, seq int) {
	s.watching, s.cancel = nil, nil
	var res protocol.WatchResult
	if err := f.Get(ctx, &res); err != nil {
		if !temporal.IsCanceledError(err) {
			s.recordError(ctx, "watch: "+errorMessage(err))
			s.retrySoon = true
		}
		return
	}
	if s.c.Watched == nil {
		s.c.Watched = &WatchedState{}
	}
	w := s.c.Watched
	if res.View.Registry != "" && w.Registry == "" {
		s.recordError(ctx, domain.ErrSchemaRegistryUnavailable+": "+res.View.Registry)
	}
	w.Registry = res.View.Registry
	if res.View.Problem != "" {
		if w.Problem == "" || w.ProblemType != res.View.ProblemType {
			s.recordError(ctx, s.problemMessage(res.View))
		}
		w.Problem, w.ProblemType = res.View.Problem, res.View.ProblemType
	} else {
		w.Problem, w.ProblemType = "", ""
		s.c.Connected = true
		s.setLatest(ctx, res.Latest)
		if err := s.applyPartitions(ctx, res.View.Partitions); err != nil {
			s.recordError(ctx, "partitions: "+errorMessage(err))
			s.retrySoon = true
		}
	}
	if res.Connected {
		s.c.Connected = true
	}
	w.CaughtUp = res.View.CaughtUp
	s.onHeld(ctx, res.View.Held)
	if len(res.Current) > 0 {
		if s.c.Current == nil {
			s.c.Current = domain.Offsets{}
		}
		for p, o := range res.Current {
			s.c.Current[p] = max(s.c.Current[p], o)
		}
	}
	s.applyGroupStates(ctx, res.View.Groups, res.Closed, func(g int) bool { return s.startedIn[g] >= seq })
	s.onLagSamples(ctx, res)
}

// problemMessage says why the topic cannot be read, as the old loop's
// recorded error did.
func (s *supervisor) problemMessage(v protocol.WatchView) string {
	if v.ProblemType != "" {
		return v.ProblemType + ": " + v.Problem
	}
	return v.Problem
}
