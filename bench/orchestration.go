package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// orchestrationResult is what Temporal costs a supervisor and its groups
// when its topic is empty and when it ingests a steady rate (issue 14).
type orchestrationResult struct {
	Worker string `json:"worker"`
	// Start says when each window's counting began.
	Start   string               `json:"start"`
	Idle    *orchestrationWindow `json:"idle,omitempty"`
	Steady  *orchestrationWindow `json:"steady,omitempty"`
	Handoff *handoffCost         `json:"handoff,omitempty"`
	Latency *handoffResult       `json:"latency,omitempty"` // at the steady rate
	Targets []targetCheck        `json:"targets"`
}

// orchestrationSettle is how long a phase waits, once its supervisor is
// IDLE (idle phase) or RUNNING with its first events read (steady phase)
// and every group running, before it starts counting: the start-up
// transient, up to an empty topic's first "caught up", is not part of the
// cost per day.
const orchestrationSettle = 10 * time.Second

const startRule = "counting begins 10 s after the supervisor is IDLE (idle phase) or RUNNING with its first events read (steady phase), every group running"

func runOrchestration(ctx context.Context, s *stack, o options, tc client.Client) (orchestrationResult, error) {
	res := orchestrationResult{Worker: o.workerBin, Start: startRule}
	b, err := os.ReadFile(o.orchSpec)
	if err != nil {
		return res, fmt.Errorf("orchestration spec: %w", err)
	}
	base, err := domain.ParseSpec(b)
	if err != nil {
		return res, fmt.Errorf("orchestration spec %s: %w", o.orchSpec, err)
	}
	if o.idle > 0 {
		logf("orchestration, idle: %v on an empty topic", o.idle)
		w, err := runIdle(ctx, s, o, tc, base)
		if err != nil {
			return res, fmt.Errorf("idle: %w", err)
		}
		res.Idle = &w
	}
	if o.steady > 0 {
		logf("orchestration, steady: %v at %.0f events/s, then %d checkpoints", o.steady, o.steadyRate, o.orchCheckpoints)
		if err := runSteady(ctx, s, o, tc, base, &res); err != nil {
			return res, fmt.Errorf("steady: %w", err)
		}
	}
	res.Targets = checkTargets(res)
	return res, nil
}

// orchestrationSpec is base under its own names; defaultHandoff clears
// its handoff settings, so that the project's defaults apply.
func orchestrationSpec(base domain.Spec, name string, defaultHandoff bool) (domain.Spec, error) {
	s := base
	s.ID, s.DataSchema.DataSource, s.IOConfig.Topic = name, strings.ReplaceAll(name, "-", "_"), name
	s.IOConfig.UseEarliestOffset = true
	if defaultHandoff {
		t := &s.TuningConfig
		t.IntermediateHandoffPeriod, t.MaxRowsPerSegment, t.MaxTotalRows, t.MaxSequenceBytes = 0, 0, 0, 0
	}
	s.ApplyDefaults()
	return s, s.Validate()
}

// describeSpec says which spec a phase used, in the terms that set its
// orchestration cost.
func describeSpec(path string, s domain.Spec, defaultHandoff bool) string {
	handoff := "its own handoff settings"
	if defaultHandoff {
		handoff = "the default handoff settings"
	}
	ihp := "none"
	if d := s.TuningConfig.IntermediateHandoffPeriod.D(); d > 0 {
		ihp = d.String()
	}
	return fmt.Sprintf("%s with %s (taskCount %d, period %v, intermediateHandoffPeriod %s, maxRowsPerSegment %d, maxTotalRows %d)",
		path, handoff, s.IOConfig.TaskCount, s.IOConfig.Period.D(), ihp, s.TuningConfig.MaxRowsPerSegment, s.TuningConfig.MaxTotalRows)
}

// runIdle measures a supervisor whose topic stays empty.
func runIdle(ctx context.Context, s *stack, o options, tc client.Client, base domain.Spec) (orchestrationWindow, error) {
	spec, err := orchestrationSpec(base, "bench-idle", false)
	if err != nil {
		return orchestrationWindow{}, err
	}
	if err := s.createTopic(ctx, spec.IOConfig.Topic, o.partitions); err != nil {
		return orchestrationWindow{}, err
	}
	_, w, done, err := startPhase(ctx, s, o, "idle", "")
	if err != nil {
		return orchestrationWindow{}, err
	}
	defer done()
	if err := startSupervisor(ctx, tc, spec); err != nil {
		return orchestrationWindow{}, err
	}
	if err := waitOrchestrating(ctx, tc, spec, w, false); err != nil {
		return orchestrationWindow{}, err
	}
	a, b, err := measureWindow(ctx, s, tc, spec, o, w, "idle", o.idle)
	if err != nil {
		return orchestrationWindow{}, err
	}
	if err := stopSupervisor(ctx, tc, spec.ID); err != nil {
		return orchestrationWindow{}, err
	}
	return newWindow(describeSpec(o.orchSpec, spec, false), 0, a, b), nil
}

// runSteady measures a supervisor at a steady rate with the default
// handoff settings, then what checkpoints add to it and how long each
// takes to commit; at the end every committed offset must be in a segment
// exactly once.
func runSteady(ctx context.Context, s *stack, o options, tc client.Client, base domain.Spec, res *orchestrationResult) error {
	spec, err := orchestrationSpec(base, "bench-steady", true)
	if err != nil {
		return err
	}
	if err := s.createTopic(ctx, spec.IOConfig.Topic, o.partitions); err != nil {
		return err
	}
	pool, w, done, err := startPhase(ctx, s, o, "steady", "")
	if err != nil {
		return err
	}
	defer done()

	pctx, stopProducing := context.WithCancel(ctx)
	defer stopProducing()
	produced := make(chan error, 1)
	go func() {
		_, err := eventgen.New("bench-steady", 1).Produce(pctx, s.brokers, spec.IOConfig.Topic, o.steadyRate, 0, false)
		produced <- err
	}()
	if err := startSupervisor(ctx, tc, spec); err != nil {
		return err
	}
	if err := waitOrchestrating(ctx, tc, spec, w, true); err != nil {
		return err
	}
	a, b, err := measureWindow(ctx, s, tc, spec, o, w, "steady", o.steady)
	if err != nil {
		return err
	}
	steady := newWindow(describeSpec(o.orchSpec, spec, true), o.steadyRate, a, b)
	if st, err := supervisorStatus(ctx, tc, spec.ID); err == nil {
		logf("steady: at the window's end %d events produced; read by the supervisor's status %d, by the groups' own account %d",
			b.ends.Sum(), st.Current.Sum(), groupsRead(ctx, tc, spec))
	}
	res.Steady = &steady

	if o.orchCheckpoints > 0 {
		logf("orchestration, steady: %d checkpoints at %.0f events/s", o.orchCheckpoints, o.steadyRate)
		samples, err := timeCheckpoints(ctx, tc, pool, spec.ID, o.orchCheckpoints, w)
		if err != nil {
			return err
		}
		c, err := takeSnapshot(ctx, s, tc, spec, o.partitions)
		if err != nil {
			return err
		}
		h := newHandoffCost(o.orchCheckpoints, int64(len(samples)), steady, b, c)
		lat := handoffResult{Checkpoints: o.orchCheckpoints, Rate: o.steadyRate}
		lat.setSamples(samples)
		res.Handoff, res.Latency = &h, &lat
	}
	stopProducing()
	if err := <-produced; err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	if err := stopSupervisor(ctx, tc, spec.ID); err != nil {
		return err
	}
	committed, err := committedOffsets(ctx, pool, spec)
	if err != nil {
		return err
	}
	return verifyCount(ctx, pool, spec, committed.Sum())
}

func startSupervisor(ctx context.Context, tc client.Client, spec domain.Spec) error {
	if _, err := tc.ExecuteWorkflow(ctx, startOptions(spec), workflows.SupervisorWorkflowName, workflows.SupervisorInput{Spec: spec}); err != nil {
		return fmt.Errorf("start supervisor: %w", err)
	}
	return nil
}

// waitOrchestrating waits until every group runs and the supervisor is
// IDLE (its topic seen caught up) or, with reading, RUNNING or IDLE with
// its first events read (by the supervisor's account or a group's), then
// orchestrationSettle more.
func waitOrchestrating(ctx context.Context, tc client.Client, spec domain.Spec, w *workerProc, reading bool) error {
	deadline := time.Now().Add(3 * time.Minute)
	seen := "no status"
	for {
		st, err := supervisorStatus(ctx, tc, spec.ID)
		if err == nil {
			running := 0
			for _, g := range st.Groups {
				if g.Running {
					running++
				}
			}
			read := st.Current.Sum()
			if reading && read == 0 {
				read = groupsRead(ctx, tc, spec)
			}
			seen = fmt.Sprintf("state %s (%s), %d of %d groups running, %d events read", st.State, st.DetailedState, running, spec.IOConfig.TaskCount, read)
			states := []string{workflows.StateIdle}
			if reading {
				states = append(states, workflows.StateRunning)
			}
			if slices.Contains(states, st.State) && running == spec.IOConfig.TaskCount && (!reading || read > 0) {
				logf("%s: %s; counting from %v on", spec.ID, seen, orchestrationSettle)
				return sleep(ctx, w, orchestrationSettle)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not orchestrating within 3 minutes: last seen %s; see %s", spec.ID, seen, w.logPath)
		}
		if err := sleep(ctx, w, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// groupsRead is how far the groups have read by their own account: the
// positions in their workflow state (a group learns them when a consume
// returns) raised to those their running consumes last heartbeat
// (harness.GroupPositions), or the heartbeats alone when a group does
// not answer its query.
func groupsRead(ctx context.Context, tc client.Client, spec domain.Spec) int64 {
	pos, err := harness.GroupPositions(ctx, tc, spec)
	if err != nil {
		if pos, err = harness.StreamOffsets(ctx, tc, spec); err != nil {
			return 0
		}
	}
	return pos.Sum()
}

// measureWindow takes a snapshot, waits d (logging the running count every
// 30 s) and takes another.
func measureWindow(ctx context.Context, s *stack, tc client.Client, spec domain.Spec, o options, w *workerProc, name string, d time.Duration) (a, b snapshot, err error) {
	if a, err = takeSnapshot(ctx, s, tc, spec, o.partitions); err != nil {
		return a, b, err
	}
	end := a.at.Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			break
		}
		if err := sleep(ctx, w, min(left, 30*time.Second)); err != nil {
			return a, b, err
		}
		if b, err = takeSnapshot(ctx, s, tc, spec, o.partitions); err != nil {
			return a, b, err
		}
		h := b.history.minus(a.history)
		logf("%s: %v of %v: %d history events (supervisor %d, groups %d), %d activities scheduled, %d local, %d heartbeats, %d events produced",
			name, b.at.Sub(a.at).Round(time.Second), d, h.Total(), h.Supervisor, h.Groups, h.ActivitiesScheduled, h.LocalActivities,
			b.heartbeats-a.heartbeats, b.ends.Sum()-a.ends.Sum())
	}
	return a, b, nil
}

// sleep waits d unless ctx ends or the worker exits.
func sleep(ctx context.Context, w *workerProc, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-w.done:
		return fmt.Errorf("worker exited: %v; see %s", w.err, w.logPath)
	case <-time.After(d):
		return nil
	}
}

// verifyCount checks that the spec's count metric sums to want (the
// offsets committed) over the published segments.
func verifyCount(ctx context.Context, pool *pgxpool.Pool, spec domain.Spec, want int64) error {
	for _, m := range spec.DataSchema.MetricsSpec {
		if m.Type == "count" {
			return verifyEvents(ctx, pool, spec, m.Name, want)
		}
	}
	return fmt.Errorf("%s: no count metric to check the segments with", spec.ID)
}
