package workflows

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"handoff/internal/domain"

	"go.temporal.io/sdk/workflow"
)

// How long updates wait for what they asked to happen before answering
// with where things stand.
const (
	checkpointWait = 2 * time.Minute
	suspendWait    = 5 * time.Minute
)

// checkpointWaiter is one group's part of a checkpoint update in flight.
type checkpointWaiter struct {
	done   bool
	result GroupCheckpointResult
}

// registerHandlers sets the status query and the operations' updates.
func (s *supervisor) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (SupervisorStatus, error) {
		return s.status(), nil
	}); err != nil {
		return err
	}
	handlers := []struct {
		name      string
		handler   any
		validator any
	}{
		{UpdateCheckpoint, s.updateCheckpoint, s.validateCheckpoint},
		{UpdateStop, s.updateStop, nil},
		{UpdateSuspend, s.updateSuspend, s.validateRunning},
		{UpdateResume, s.updateResume, s.validateRunning},
		{UpdateReset, s.updateReset, s.validateReset},
		{UpdateSpec, s.updateSpec, s.validateSpec},
	}
	for _, h := range handlers {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, h.name, h.handler, workflow.UpdateHandlerOptions{Validator: h.validator}); err != nil {
			return fmt.Errorf("register update %s: %w", h.name, err)
		}
	}
	return nil
}

func (s *supervisor) validateRunning(workflow.Context) error {
	if s.c.Target == targetStop {
		return errors.New("the supervisor is stopping")
	}
	return nil
}

func (s *supervisor) validateCheckpoint(ctx workflow.Context, m CheckpointSignal) error {
	if err := s.validateRunning(ctx); err != nil {
		return err
	}
	if s.c.Target == targetSuspend {
		return errors.New("the supervisor is suspended: nothing is read, so there is nothing to checkpoint")
	}
	for _, g := range m.Groups {
		if _, ok := s.c.Groups[g]; !ok {
			return fmt.Errorf("no task group %d: the groups are %v", g, s.sortedGroups())
		}
	}
	return nil
}

// updateCheckpoint answers once every asked group recorded a boundary, had
// nothing to close, or did not answer within checkpointWait.
func (s *supervisor) updateCheckpoint(ctx workflow.Context, m CheckpointSignal) (CheckpointResult, error) {
	waiters := s.checkpoint(ctx, m)
	all := func() bool {
		for _, w := range waiters {
			if !w.done {
				return false
			}
		}
		return true
	}
	if _, err := workflow.AwaitWithTimeout(ctx, checkpointWait, all); err != nil {
		return CheckpointResult{}, err
	}
	var res CheckpointResult
	for _, w := range waiters {
		r := w.result
		if !w.done {
			r.Outcome = CheckpointTimedOut
		}
		res.Groups = append(res.Groups, r)
	}
	return res, nil
}

func (s *supervisor) updateStop(ctx workflow.Context, _ StopSignal) (OperationResult, error) {
	s.setTarget(targetStop)
	return OperationResult{State: StateStopping, Message: "every group closes and publishes its open sequence; then the supervisor completes"}, nil
}

// updateSuspend answers once every group has published and finished, so a
// reset can follow at once.
func (s *supervisor) updateSuspend(ctx workflow.Context) (OperationResult, error) {
	s.setTarget(targetSuspend)
	ok, err := workflow.AwaitWithTimeout(ctx, suspendWait, func() bool { return s.c.State == StateSuspended || s.c.Target != targetSuspend })
	if err != nil {
		return OperationResult{}, err
	}
	if !ok || s.c.State != StateSuspended {
		return OperationResult{State: s.c.State, Message: "suspending: groups are still publishing; see status"}, nil
	}
	return OperationResult{State: StateSuspended, Message: "every open sequence is published; nothing is read until resume"}, nil
}

func (s *supervisor) updateResume(ctx workflow.Context) (OperationResult, error) {
	if s.c.Target == targetRun {
		return OperationResult{State: s.c.State, Message: "already running"}, nil
	}
	s.setTarget(targetRun)
	return OperationResult{State: StateRunning, Message: "groups start again from the committed offsets"}, nil
}

// resetTargets expands a request into a target per partition.
func (s *supervisor) resetTargets(r ResetRequest) (map[domain.Partition]string, error) {
	if len(r.Partitions) > 0 && r.All != "" {
		return nil, errors.New("give either partitions or all, not both")
	}
	out := map[domain.Partition]string{}
	for p, t := range r.Partitions {
		out[p] = t
	}
	if len(r.Partitions) == 0 {
		if r.All == "" {
			return nil, errors.New("nothing to reset: give partitions or all")
		}
		for _, p := range s.c.Partitions {
			out[p] = r.All
		}
	}
	for p, t := range out {
		if !slices.Contains(s.c.Partitions, p) {
			return nil, fmt.Errorf("partition %s is not a partition of topic %q (it has %v)", p, s.spec.IOConfig.Source(), s.c.Partitions)
		}
		if t == ResetEarliest || t == ResetLatest {
			continue
		}
		if n, err := strconv.ParseInt(t, 10, 64); err != nil || n < 0 {
			return nil, fmt.Errorf("partition %s: %q is not earliest, latest or an offset", p, t)
		}
	}
	return out, nil
}

func (s *supervisor) validateReset(ctx workflow.Context, r ResetRequest) error {
	if err := s.validateRunning(ctx); err != nil {
		return err
	}
	if !(s.c.Target == targetSuspend && s.drained()) && !r.Force {
		return fmt.Errorf("the supervisor is %s: suspend it first (its groups publish what they read), or force the reset, which drops what they read and did not publish", s.c.State)
	}
	_, err := s.resetTargets(r)
	return err
}

// updateSpec accepts a new spec. An identical one changes nothing; a
// different one is recorded, and applies once the groups have published.
func (s *supervisor) validateSpec(ctx workflow.Context, r UpdateSpecRequest) error {
	if err := s.validateRunning(ctx); err != nil {
		return err
	}
	n := r.Spec
	n.ApplyDefaults()
	if err := n.Validate(); err != nil {
		return err
	}
	switch {
	case n.ID != s.spec.ID:
		return fmt.Errorf("id: the spec is for supervisor %q, this is %q", n.ID, s.spec.ID)
	case n.DataSchema.DataSource != s.spec.DataSchema.DataSource:
		return fmt.Errorf("dataSchema.dataSource: a supervisor keeps its datasource (%q); start a new supervisor for %q", s.spec.DataSchema.DataSource, n.DataSchema.DataSource)
	case n.IOConfig.Topic != s.spec.IOConfig.Topic:
		return fmt.Errorf("ioConfig.topic: a supervisor keeps its topic (%q); start a new supervisor for %q", s.spec.IOConfig.Topic, n.IOConfig.Topic)
	case n.IOConfig.TopicPattern != s.spec.IOConfig.TopicPattern:
		return fmt.Errorf("ioConfig.topicPattern: a supervisor keeps its topicPattern (%q); start a new supervisor for %q", s.spec.IOConfig.TopicPattern, n.IOConfig.TopicPattern)
	}
	return nil
}

func (s *supervisor) updateSpec(ctx workflow.Context, r UpdateSpecRequest) (UpdateSpecResult, error) {
	n := r.Spec
	n.ApplyDefaults()
	current := s.spec
	if s.c.PendingSpec != nil {
		current = *s.c.PendingSpec
	}
	if reflect.DeepEqual(n, current) {
		return UpdateSpecResult{Changed: false, Message: "the spec is the one in use: nothing to do"}, nil
	}
	if _, err := s.recordSpec(ctx, n); err != nil {
		return UpdateSpecResult{}, err
	}
	s.c.PendingSpec = &n
	s.poke()
	return UpdateSpecResult{Changed: true, Message: "accepted: the groups publish their open sequences, then the new spec applies"}, nil
}
