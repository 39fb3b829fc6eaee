package workflows

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// idleHours is how long the idle tests leave a quiet topic alone.
const idleHours = 3

// maxIdleEventsPerHour bounds what one quiet workflow may write an hour:
// the budget is 2,000 a day for a supervisor and two groups, about
// 27 an hour each.
const maxIdleEventsPerHour = 20

// streamGroup runs one TaskGroupWorkflow of the long-running design
// against a stream fake: stream returns what a ConsumeStream given in
// returns, after its delay on the workflow clock.
type streamGroup struct {
	env   *testsuite.TestWorkflowEnvironment
	costs *costCounter

	mu      sync.Mutex
	streams []protocol.ConsumeStreamInput
	wakes   []string
	signals []string
	sent    []any // each signal's argument, beside its name in signals
	// events logs, in order, each stream's start ("stream <sequence>") and
	// each answer to a checkpoint request ("answer <sequence>").
	events []string
	// answerAfter delays the supervisor's answers on the workflow clock.
	answerAfter time.Duration
}

func newStreamGroup(t *testing.T, stream func(protocol.ConsumeStreamInput) protocol.ConsumeStreamResult, after time.Duration) *streamGroup {
	env := newTestEnv(t)
	env.SetWorkflowRunTimeout(24 * time.Hour) // the idle test runs for hours of workflow time
	g := &streamGroup{env: env, costs: newCostCounter()}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{g.costs}})
	env.RegisterWorkflowWithOptions(TaskGroupWorkflow, workflow.RegisterOptions{Name: TaskGroupWorkflowName})
	fake := func(_ context.Context, in protocol.ConsumeStreamInput) (protocol.ConsumeStreamResult, error) {
		g.mu.Lock()
		g.streams = append(g.streams, in)
		g.events = append(g.events, "stream "+in.SequenceName)
		g.mu.Unlock()
		return stream(in), nil
	}
	env.RegisterActivityWithOptions(fake, activity.RegisterOptions{Name: protocol.ActivityConsumeStream})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.WakeConsumeInput) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.wakes = append(g.wakes, in.Key)
		return nil
	}, activity.RegisterOptions{Name: protocol.ActivityWakeConsume})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.PublishInput) (protocol.PublishResult, error) {
		return protocol.PublishResult{SegmentIDs: []string{"seg"}, Rows: in.End.Sum() - in.Start.Sum()}, nil
	}, activity.RegisterOptions{Name: protocol.ActivityPublish})
	env.OnActivity(protocol.ActivityConsumeStream, mock.Anything, mock.Anything).Return(fake).After(after)
	env.OnSignalExternalWorkflow(mock.Anything, SupervisorWorkflowID(testSpec().ID), "", mock.Anything, mock.Anything).
		Return(nil).Run(func(args mock.Arguments) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.signals = append(g.signals, args.String(3))
		g.sent = append(g.sent, args.Get(4))
		if req, ok := args.Get(4).(CheckpointRequest); ok {
			answer := func() {
				g.mu.Lock()
				g.events = append(g.events, fmt.Sprintf("answer %d", req.SequenceID))
				g.mu.Unlock()
				env.SignalWorkflow(SignalSetEndOffsets, answerAt(req))
			}
			if g.answerAfter > 0 {
				env.RegisterDelayedCallback(answer, g.answerAfter)
				return
			}
			g.events = append(g.events, fmt.Sprintf("answer %d", req.SequenceID))
			env.SignalWorkflow(SignalSetEndOffsets, answerAt(req))
		}
	})
	return g
}

// steppedStream is a stream fake whose n-th return (from 1) reads step
// records of each of two partitions past where it started, as one chunk,
// and returns for reason.
func steppedStream(at func(n int) (step int64, reason string)) func(protocol.ConsumeStreamInput) protocol.ConsumeStreamResult {
	var (
		mu sync.Mutex
		n  int
	)
	return func(in protocol.ConsumeStreamInput) protocol.ConsumeStreamResult {
		mu.Lock()
		defer mu.Unlock()
		n++
		step, reason := at(n)
		to := domain.Offsets{}
		for p, o := range in.From {
			to[p] = o + step
		}
		rows := 2 * step
		return protocol.ConsumeStreamResult{To: to, Records: rows, Rows: rows, Reason: reason,
			Chunks: []protocol.ChunkRef{{Key: fmt.Sprintf("%s/c%d", in.SequenceName, n), Rows: rows}}}
	}
}

// publishes makes every Publish record its input (and publish the
// sequence's offsets as rows); the function returns those so far.
func (g *streamGroup) publishes() func() []protocol.PublishInput {
	var got []protocol.PublishInput
	g.env.OnActivity(protocol.ActivityPublish, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.PublishInput) (protocol.PublishResult, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			got = append(got, in)
			return protocol.PublishResult{SegmentIDs: []string{"seg"}, Rows: in.End.Sum() - in.Start.Sum()}, nil
		})
	return func() []protocol.PublishInput {
		g.mu.Lock()
		defer g.mu.Unlock()
		return slices.Clone(got)
	}
}

func quietGroupInput() TaskGroupInput {
	return TaskGroupInput{
		Spec: testSpec(), Group: 0, Generation: 1, Partitions: []domain.Partition{domain.P(0), domain.P(1)},
		Sequences: []domain.Sequence{{ID: 0, Start: domain.Offsets{domain.P(0): 0, domain.P(1): 0}}},
	}
}

// TestIdleGroupWritesAlmostNoHistory leaves a group on an empty topic for
// three simulated hours: it holds one stream at a time, each returning
// only after its longest run, and sends nothing to its supervisor.
func TestIdleGroupWritesAlmostNoHistory(t *testing.T) {
	quiet := func(in protocol.ConsumeStreamInput) protocol.ConsumeStreamResult {
		return protocol.ConsumeStreamResult{To: in.From.Clone(), Reason: protocol.StreamMaxRun}
	}
	g := newStreamGroup(t, quiet, streamMaxRun)
	var atHour []cost
	for h := 1; h <= idleHours; h++ {
		g.env.RegisterDelayedCallback(func() { atHour = append(atHour, g.costs.of(TaskGroupWorkflowName)) }, time.Duration(h)*time.Hour-time.Second)
	}
	// The stop comes half-way through a stream (not when one returns, which
	// would make the wake depend on which of the two the test clock fires
	// first).
	g.env.RegisterDelayedCallback(func() { g.env.SignalWorkflow(SignalGroupStop, nil) }, idleHours*time.Hour+30*time.Minute)
	g.env.ExecuteWorkflow(TaskGroupWorkflowName, quietGroupInput())
	require.True(t, g.env.IsWorkflowCompleted())
	require.NoError(t, g.env.GetWorkflowError())

	require.Len(t, atHour, idleHours)
	for h, c := range atHour {
		prev := cost{}
		if h > 0 {
			prev = atHour[h-1]
		}
		hour := c.historyEvents() - prev.historyEvents()
		if h == 0 {
			hour = c.historyEvents()
		}
		assert.LessOrEqual(t, hour, maxIdleEventsPerHour, "hour %d: %+v", h+1, c)
	}
	last := atHour[idleHours-1]
	assert.LessOrEqual(t, last.Activities, idleHours, "one stream an hour at most: %+v", last)
	assert.Equal(t, 1, last.SignalsSent, "only the first progress report (which names the generation): %+v", last)
	assert.Len(t, g.wakes, 1, "the stop wakes the stream once")
}

// TestStreamedCheckpointWakesTheStreamAndPublishes: a checkpoint while a
// stream reads wakes it (one local activity), and what the stream staged
// is closed at its position and published.
func TestStreamedCheckpointWakesTheStreamAndPublishes(t *testing.T) {
	var n int
	var mu sync.Mutex
	read := func(in protocol.ConsumeStreamInput) protocol.ConsumeStreamResult {
		mu.Lock()
		defer mu.Unlock()
		n++
		to := domain.Offsets{}
		for p, o := range in.From {
			to[p] = o + 50
		}
		return protocol.ConsumeStreamResult{
			To: to, Records: 100, Rows: 100, Bytes: 1000, Reason: protocol.StreamWoken,
			Chunks: []protocol.ChunkRef{{Key: in.SequenceName + "/c" + string(rune('0'+n)), Rows: 100, Bytes: 1000}},
		}
	}
	g := newStreamGroup(t, read, time.Minute)
	publishes := g.publishes()
	g.env.RegisterDelayedCallback(func() { g.env.SignalWorkflow(SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser}) }, 30*time.Second)
	g.env.RegisterDelayedCallback(func() { g.env.SignalWorkflow(SignalGroupStop, nil) }, 10*time.Minute)
	g.env.ExecuteWorkflow(TaskGroupWorkflowName, quietGroupInput())
	require.True(t, g.env.IsWorkflowCompleted())
	require.NoError(t, g.env.GetWorkflowError())

	require.NotEmpty(t, g.wakes, "the checkpoint wakes the stream")
	published := publishes()
	require.NotEmpty(t, published)
	first := published[0]
	assert.Equal(t, domain.Offsets{domain.P(0): 0, domain.P(1): 0}, first.Start)
	assert.Equal(t, domain.Offsets{domain.P(0): 50, domain.P(1): 50}, first.End, "closed where the stream stopped")
	assert.Equal(t, []string{"spec1_g0_s0/c1"}, first.StagingKeys)
	assert.NotNil(t, g.streams[0].Close, "a stream into the open sequence carries its triggers")
	assert.Contains(t, g.signals, SignalCheckpointRequest)
}

// TestIdleSupervisorWritesAlmostNoHistory leaves a supervisor whose topic
// is empty for three simulated hours: after laying out its groups it only
// renews its watch once an hour.
func TestIdleSupervisorWritesAlmostNoHistory(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.TaskCount = 2
	h := newSupervisorHarness(t, spec)
	h.env.SetWorkflowRunTimeout(24 * time.Hour)
	costs := newCostCounter()
	h.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{costs}})
	h.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 0, domain.P(1): 0, domain.P(2): 0, domain.P(3): 0}}
	var mu sync.Mutex
	var watches []protocol.WatchInput
	watch := func(_ context.Context, in protocol.WatchInput) (protocol.WatchResult, error) {
		mu.Lock()
		watches = append(watches, in)
		mu.Unlock()
		v := in.Known
		if len(v.Partitions) == 0 {
			v.Partitions = []domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(3)}
		}
		return protocol.WatchResult{View: v, Latest: domain.Offsets{domain.P(0): 0, domain.P(1): 0, domain.P(2): 0, domain.P(3): 0}, Connected: true, Reason: "max-run"}, nil
	}
	h.env.RegisterActivityWithOptions(watch, activity.RegisterOptions{Name: protocol.ActivityWatch})
	h.env.OnActivity(protocol.ActivityWatch, mock.Anything, mock.Anything).Return(watch).Once()
	h.env.OnActivity(protocol.ActivityWatch, mock.Anything, mock.Anything).Return(watch).After(watchMaxRun)
	var atHour []cost
	for hr := 1; hr <= idleHours; hr++ {
		h.at(time.Duration(hr)*time.Hour-time.Second, func() { atHour = append(atHour, costs.of(SupervisorWorkflowName)) })
	}
	h.signal(idleHours*time.Hour, SignalStop, StopSignal{})
	h.env.ExecuteWorkflow(SupervisorWorkflowName, SupervisorInput{Spec: spec})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())

	require.Len(t, atHour, idleHours)
	require.Len(t, h.started(), 2, "both groups started once")
	for hr := 1; hr < idleHours; hr++ {
		hour := atHour[hr].historyEvents() - atHour[hr-1].historyEvents()
		assert.LessOrEqual(t, hour, maxIdleEventsPerHour, "hour %d: %+v then %+v", hr+1, atHour[hr-1], atHour[hr])
	}
	// The first hour also lays the groups out and starts them.
	assert.LessOrEqual(t, atHour[0].historyEvents(), maxIdleEventsPerHour+30, "first hour: %+v", atHour[0])
	assert.Zero(t, h.discovers(), "no Discover: the watch does its work")
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, len(watches), idleHours+1, "one watch an hour, and the first one")
}
