package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// supervisor is the state of one SupervisorWorkflow run.
type supervisor struct {
	spec domain.Spec
	c    SupervisorCarry
	// wake makes the loop reconcile now instead of at the end of the period.
	wake workflow.Channel
	// waiters are the checkpoint updates waiting for each group's answer.
	waiters map[int][]*checkpointWaiter
	// visible is the state last written to the search attributes.
	visible string
	// reconciling and resetting keep a reset from interleaving with a
	// reconcile: both change the groups' sequences across activities.
	reconciling, resetting bool
	// parallelSignals: the run records parallelCheckpointVersion.
	parallelSignals bool
	watchState      // supervisor_watch.go
}

// supervisorSignals are the channels a supervisor listens on.
type supervisorSignals struct {
	checkpoint, stop, suspend, resume      workflow.ReceiveChannel
	request, declined, published, finished workflow.ReceiveChannel
	progress                               workflow.ReceiveChannel
	outOfRange                             workflow.ReceiveChannel // supervisor_outofrange.go
}

// SupervisorWorkflow runs one ingestion spec. It is the checkpoint
// authority: a sequence boundary exists once this workflow recorded it. Every
// period, or at once after an operation, it reconciles: rediscovers
// partitions, (re)starts groups that should run, drains those that should
// stop, applies a new spec once drained. Between reconciles it answers
// signals from users and groups.
func SupervisorWorkflow(ctx workflow.Context, in SupervisorInput) error {
	// A spec carried from an older version lacks newer fields: fill their
	// defaults, as the spec's parser would have.
	in.Spec.ApplyDefaults()
	if in.Carry != nil && in.Carry.PendingSpec != nil {
		in.Carry.PendingSpec.ApplyDefaults()
	}
	s := &supervisor{spec: in.Spec, wake: workflow.NewBufferedChannel(ctx, 1), waiters: map[int][]*checkpointWaiter{}}
	if in.Carry != nil {
		s.c = *in.Carry
		s.visible = s.c.State
	} else {
		s.c = SupervisorCarry{State: StatePending, Target: targetRun, Groups: map[int]*groupRecord{}}
	}
	s.parallelSignals = workflow.GetVersion(ctx, parallelCheckpointChange, workflow.DefaultVersion, parallelCheckpointVersion) >= parallelCheckpointVersion
	s.watch = workflow.GetVersion(ctx, watchChange, workflow.DefaultVersion, watchVersion) >= watchVersion
	s.startedIn = map[int]int{}
	if err := s.registerHandlers(ctx); err != nil {
		return err
	}
	sig := supervisorSignals{
		checkpoint: workflow.GetSignalChannel(ctx, SignalCheckpoint),
		stop:       workflow.GetSignalChannel(ctx, SignalStop),
		suspend:    workflow.GetSignalChannel(ctx, SignalSuspend),
		resume:     workflow.GetSignalChannel(ctx, SignalResume),
		request:    workflow.GetSignalChannel(ctx, SignalCheckpointRequest),
		declined:   workflow.GetSignalChannel(ctx, SignalCheckpointDeclined),
		published:  workflow.GetSignalChannel(ctx, SignalSequencePublished),
		finished:   workflow.GetSignalChannel(ctx, SignalGroupFinished),
		progress:   workflow.GetSignalChannel(ctx, SignalProgress),
		outOfRange: workflow.GetSignalChannel(ctx, SignalOffsetOutOfRange),
	}
	if s.watch {
		return s.runWatched(ctx, sig)
	}
	for {
		s.reconcile(ctx)
		s.publishVisibility(ctx)
		if s.stopped() {
			return s.complete(ctx, sig)
		}
		s.waitPeriod(ctx, sig)
		// Signals that came with the timer are handled before the next
		// reconcile looks at the groups.
		s.drain(ctx, sig)
		if s.stopped() {
			return s.complete(ctx, sig)
		}
		// An update in flight may wait on a reconcile (a suspend waits for
		// SUSPENDED): continue as new only once none is.
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() && workflow.AllHandlersFinished(ctx) {
			return s.continueAsNew(ctx, sig)
		}
	}
}

func (s *supervisor) complete(ctx workflow.Context, sig supervisorSignals) error {
	s.c.State, s.c.DetailedState = StateStopped, StateStopped
	s.publishVisibility(ctx)
	s.finishHandlers(ctx, sig)
	s.drain(ctx, sig) // late group-finished signals: nothing left to do with them
	return nil
}

// continueAsNew hands the state to a fresh run once every buffered signal is
// handled and no update handler is still running.
func (s *supervisor) continueAsNew(ctx workflow.Context, sig supervisorSignals) error {
	s.finishHandlers(ctx, sig)
	s.drain(ctx, sig)
	carry := s.c
	return workflow.NewContinueAsNewError(ctx, SupervisorWorkflowName, SupervisorInput{Spec: s.spec, Carry: &carry})
}

// finishHandlers waits until every update handler has answered, handling
// signals meanwhile: a checkpoint update waits on the groups' requests.
func (s *supervisor) finishHandlers(ctx workflow.Context, sig supervisorSignals) {
	for !workflow.AllHandlersFinished(ctx) {
		sel := workflow.NewSelector(ctx)
		s.addSignals(ctx, sel, sig)
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) || sel.HasPending() })
		if sel.HasPending() {
			sel.Select(ctx)
		}
	}
}

// waitPeriod handles signals until the period passes, something asks for a
// reconcile, or a drain completes.
func (s *supervisor) waitPeriod(ctx workflow.Context, sig supervisorSignals) {
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimer(tctx, s.spec.IOConfig.Period.D())
	wasDrained := s.drained()
	for done := false; !done; {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(timer, func(workflow.Future) { done = true })
		sel.AddReceive(s.wake, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			done = true
		})
		s.addSignals(ctx, sel, sig)
		sel.Select(ctx)
		if !wasDrained && s.drained() {
			done = true // apply a spec, suspend or stop without waiting
		}
	}
}

// poke asks the loop to reconcile now.
func (s *supervisor) poke() { s.wake.SendAsync(true) }

func (s *supervisor) addSignals(ctx workflow.Context, sel workflow.Selector, sig supervisorSignals) {
	sel.AddReceive(sig.checkpoint, func(c workflow.ReceiveChannel, _ bool) {
		var m CheckpointSignal
		c.Receive(ctx, &m)
		s.checkpoint(ctx, m)
	})
	sel.AddReceive(sig.stop, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		s.setTarget(targetStop)
	})
	sel.AddReceive(sig.suspend, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		s.setTarget(targetSuspend)
	})
	sel.AddReceive(sig.resume, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		s.setTarget(targetRun)
	})
	sel.AddReceive(sig.request, func(c workflow.ReceiveChannel, _ bool) {
		var m CheckpointRequest
		c.Receive(ctx, &m)
		s.onCheckpointRequest(ctx, m)
	})
	sel.AddReceive(sig.declined, func(c workflow.ReceiveChannel, _ bool) {
		var m CheckpointDeclined
		c.Receive(ctx, &m)
		s.onCheckpointDeclined(m)
	})
	sel.AddReceive(sig.published, func(c workflow.ReceiveChannel, _ bool) {
		var m SequencePublished
		c.Receive(ctx, &m)
		s.onSequencePublished(ctx, m)
	})
	sel.AddReceive(sig.finished, func(c workflow.ReceiveChannel, _ bool) {
		var m GroupFinished
		c.Receive(ctx, &m)
		s.onGroupFinished(m)
	})
	sel.AddReceive(sig.progress, func(c workflow.ReceiveChannel, _ bool) {
		var m GroupProgress
		c.Receive(ctx, &m)
		s.onProgress(ctx, m)
	})
	sel.AddReceive(sig.outOfRange, func(c workflow.ReceiveChannel, _ bool) {
		var m OffsetOutOfRangeReport
		c.Receive(ctx, &m)
		s.onOffsetOutOfRange(ctx, m)
	})
}

// drain handles every buffered signal, so none is lost at continue-as-new.
func (s *supervisor) drain(ctx workflow.Context, sig supervisorSignals) {
	for {
		sel := workflow.NewSelector(ctx)
		s.addSignals(ctx, sel, sig)
		if !sel.HasPending() {
			return
		}
		sel.Select(ctx)
	}
}

// draining: groups must close, publish and finish (a stop, a suspend, or a
// spec waiting to apply).
func (s *supervisor) draining() bool {
	return s.c.Target != targetRun || s.c.PendingSpec != nil
}

// drained: draining, and every group has finished.
func (s *supervisor) drained() bool {
	if !s.draining() {
		return false
	}
	for _, g := range s.c.Groups {
		if !g.Finished {
			return false
		}
	}
	return true
}

// stopped: a stop was asked and every group finished.
func (s *supervisor) stopped() bool {
	return s.c.Target == targetStop && s.drained()
}

func (s *supervisor) recordError(ctx workflow.Context, msg string) {
	workflow.GetLogger(ctx).Warn("supervisor error", "error", msg)
	s.c.RecentErrors = append(s.c.RecentErrors, ErrorRecord{Time: workflow.Now(ctx), Message: msg})
	if n := len(s.c.RecentErrors); n > maxRecentErrors {
		s.c.RecentErrors = s.c.RecentErrors[n-maxRecentErrors:]
	}
}

// now is workflow time; a helper so handlers read alike.
func now(ctx workflow.Context) time.Time { return workflow.Now(ctx) }
