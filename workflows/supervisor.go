package workflows

import (
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// supervisor is the state of one SupervisorWorkflow run.
type supervisor struct {
	spec domain.Spec
	c    SupervisorCarry
}

// supervisorSignals are the channels a supervisor listens on.
type supervisorSignals struct {
	checkpoint, stop, request, published, finished workflow.ReceiveChannel
}

// SupervisorWorkflow runs one ingestion spec. It is the checkpoint
// authority: a sequence boundary exists once this workflow recorded it. Every
// period it rediscovers partitions and (re)starts task groups that are not
// running; between periods it answers signals from users and groups.
func SupervisorWorkflow(ctx workflow.Context, in SupervisorInput) error {
	s := &supervisor{spec: in.Spec}
	if in.Carry != nil {
		s.c = *in.Carry
	} else {
		s.c = SupervisorCarry{State: StatePending, Groups: map[int]*groupRecord{}}
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (SupervisorStatus, error) {
		return s.status(), nil
	}); err != nil {
		return err
	}
	sig := supervisorSignals{
		checkpoint: workflow.GetSignalChannel(ctx, SignalCheckpoint),
		stop:       workflow.GetSignalChannel(ctx, SignalStop),
		request:    workflow.GetSignalChannel(ctx, SignalCheckpointRequest),
		published:  workflow.GetSignalChannel(ctx, SignalSequencePublished),
		finished:   workflow.GetSignalChannel(ctx, SignalGroupFinished),
	}
	for {
		s.reconcile(ctx)
		if s.stopped() {
			s.c.State = StateStopped
			return nil
		}
		s.waitPeriod(ctx, sig)
		if s.stopped() {
			s.c.State = StateStopped
			return nil
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			s.drain(ctx, sig)
			carry := s.c
			return workflow.NewContinueAsNewError(ctx, SupervisorWorkflowName, SupervisorInput{Spec: s.spec, Carry: &carry})
		}
	}
}

// waitPeriod handles signals until the period passes, or until a stop
// completes.
func (s *supervisor) waitPeriod(ctx workflow.Context, sig supervisorSignals) {
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimer(tctx, s.spec.IOConfig.Period.D())
	for fired := false; !fired && !s.stopped(); {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(timer, func(workflow.Future) { fired = true })
		s.addSignals(ctx, sel, sig)
		sel.Select(ctx)
	}
}

func (s *supervisor) addSignals(ctx workflow.Context, sel workflow.Selector, sig supervisorSignals) {
	sel.AddReceive(sig.checkpoint, func(c workflow.ReceiveChannel, _ bool) {
		var m CheckpointSignal
		c.Receive(ctx, &m)
		s.onCheckpoint(ctx, m)
	})
	sel.AddReceive(sig.stop, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		s.onStop(ctx)
	})
	sel.AddReceive(sig.request, func(c workflow.ReceiveChannel, _ bool) {
		var m CheckpointRequest
		c.Receive(ctx, &m)
		s.onCheckpointRequest(ctx, m)
	})
	sel.AddReceive(sig.published, func(c workflow.ReceiveChannel, _ bool) {
		var m SequencePublished
		c.Receive(ctx, &m)
		s.onSequencePublished(m)
	})
	sel.AddReceive(sig.finished, func(c workflow.ReceiveChannel, _ bool) {
		var m GroupFinished
		c.Receive(ctx, &m)
		s.onGroupFinished(m)
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

// stopped: a stop was asked and every group finished.
func (s *supervisor) stopped() bool {
	if !s.c.Stopping {
		return false
	}
	for _, g := range s.c.Groups {
		if !g.Finished {
			return false
		}
	}
	return true
}

func (s *supervisor) recordError(ctx workflow.Context, msg string) {
	workflow.GetLogger(ctx).Warn("supervisor error", "error", msg)
	s.c.RecentErrors = append(s.c.RecentErrors, ErrorRecord{Time: workflow.Now(ctx), Message: msg})
	if n := len(s.c.RecentErrors); n > maxRecentErrors {
		s.c.RecentErrors = s.c.RecentErrors[n-maxRecentErrors:]
	}
}
