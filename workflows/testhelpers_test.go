package workflows

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// chunkTime is how long (on the workflow clock) one fake Consume takes, as
// a real one reads for up to chunkPeriod. It keeps an idle group from
// spinning in zero time.
const chunkTime = time.Second

// testSpec is a valid spec with small periods, defaults applied.
func testSpec() domain.Spec {
	s := domain.Spec{
		ID: "spec1",
		DataSchema: domain.DataSchema{
			DataSource:     "events",
			TimestampSpec:  domain.TimestampSpec{Column: "ts"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{{Name: "user"}}},
		},
		IOConfig: domain.IOConfig{
			Topic:  "events",
			Period: domain.Duration(10 * time.Second),
		},
		TuningConfig: domain.TuningConfig{
			MaxRecordsPerChunk: 10,
			ChunkPeriod:        domain.Duration(chunkTime),
		},
	}
	s.ApplyDefaults()
	return s
}

// newTestEnv is a test environment that logs warnings and errors only, to
// the test's log.
func newTestEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(5 * time.Second)
	// A workflow that never completes fails the test instead of spinning
	// on the mock clock.
	env.SetWorkflowRunTimeout(10 * time.Minute)
	return env
}

// perChunk makes env run the per-chunk design, which runs started before
// streamConsumeVersion and watchVersion keep (and replay); the harnesses
// of stream_test.go drive the long-running one. Call it after the
// registrations.
func perChunk(env *testsuite.TestWorkflowEnvironment) {
	env.OnGetVersion(streamConsumeChange, workflow.DefaultVersion, streamConsumeVersion).Return(workflow.DefaultVersion)
	env.OnGetVersion(watchChange, workflow.DefaultVersion, watchVersion).Return(workflow.DefaultVersion)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// event is one thing the workflow under test did, in the order it did it:
// a Consume or Publish call (recorded when it completes) or an external
// signal it sent.
type event struct {
	kind     string // "consume", "publish" or "signal"
	consume  protocol.ConsumeInput
	consumed protocol.ConsumeResult
	publish  protocol.PublishInput
	target   string // signal's workflow id
	signal   string // signal name
	arg      any
}

// recorder logs events from activity and mock goroutines.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) all() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

func (r *recorder) count(kind string) int {
	n := 0
	for _, e := range r.all() {
		if e.kind == kind {
			n++
		}
	}
	return n
}

// index returns the position of the first event at or after from that
// matches, or -1.
func (r *recorder) index(from int, match func(event) bool) int {
	evs := r.all()
	for i := max(from, 0); i < len(evs); i++ {
		if match(evs[i]) {
			return i
		}
	}
	return -1
}

func (r *recorder) consumes() []event {
	return r.filter(func(e event) bool { return e.kind == "consume" })
}
func (r *recorder) publishes() []protocol.PublishInput {
	var out []protocol.PublishInput
	for _, e := range r.filter(func(e event) bool { return e.kind == "publish" }) {
		out = append(out, e.publish)
	}
	return out
}

func (r *recorder) filter(match func(event) bool) []event {
	var out []event
	for _, e := range r.all() {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// requests are the checkpoint requests sent, without the progress reports
// and the next sequence ids they carry (progress and the early-sequence
// tests look at those).
func (r *recorder) requests() []CheckpointRequest {
	var out []CheckpointRequest
	for _, e := range r.filter(isSignal(SignalCheckpointRequest)) {
		req := e.arg.(CheckpointRequest)
		req.Progress, req.NextSequenceID = nil, 0
		out = append(out, req)
	}
	return out
}

func (r *recorder) published() []SequencePublished {
	var out []SequencePublished
	for _, e := range r.filter(isSignal(SignalSequencePublished)) {
		out = append(out, e.arg.(SequencePublished))
	}
	return out
}

func isSignal(name string) func(event) bool {
	return func(e event) bool { return e.kind == "signal" && e.signal == name }
}

func isConsume(e event) bool { return e.kind == "consume" }

// fakeTopic simulates the partitions of a topic: partition p holds records
// [0, end[p]); one Consume reads up to chunk records per partition, never at
// or past Until, and every record is one row.
type fakeTopic struct {
	rec   *recorder
	chunk int64

	mu  sync.Mutex
	end domain.Offsets
	n   int
}

func (f *fakeTopic) consume(_ context.Context, in protocol.ConsumeInput) (protocol.ConsumeResult, error) {
	f.mu.Lock()
	res := protocol.ConsumeResult{To: domain.Offsets{}}
	for p, from := range in.From {
		to := min(from+f.chunk, max(f.end[p], from))
		if u, ok := in.Until[p]; ok {
			to = min(to, max(u, from))
		}
		res.To[p] = to
		res.Records += to - from
	}
	res.Rows = res.Records
	if res.Rows > 0 {
		f.n++
		res.StagingKey = fmt.Sprintf("staging/%s/%03d", in.SequenceName, f.n)
	}
	f.mu.Unlock()
	f.rec.add(event{kind: "consume", consume: in, consumed: res})
	return res, nil
}

func (f *fakeTopic) publish(_ context.Context, in protocol.PublishInput) (protocol.PublishResult, error) {
	in.ClosedAt = time.Time{} // workflow time (zero for restored sequences): tests compare the rest
	f.rec.add(event{kind: "publish", publish: in})
	return protocol.PublishResult{SegmentIDs: []string{fmt.Sprintf("seg-%d", in.SequenceID)}, Rows: in.End.Sum() - in.Start.Sum()}, nil
}

// groupHarness runs one TaskGroupWorkflow against a fake topic and a fake
// supervisor. By default the supervisor answers every checkpoint-request at
// once with set-end-offsets at the requested offsets, the next sequence id
// being the closed one's + 1; answer overrides that.
type groupHarness struct {
	t     *testing.T
	env   *testsuite.TestWorkflowEnvironment
	rec   *recorder
	topic *fakeTopic
	spec  domain.Spec

	// answer returns the set-end-offsets signals that answer the n-th
	// (from 1) checkpoint-request.
	answer   func(req CheckpointRequest, n int) []SetEndOffsets
	requests int
}

// answerAt answers as the supervisor does: the sequence ends where the
// group asked, and the next one has the id the group proposed, if any.
func answerAt(req CheckpointRequest) SetEndOffsets {
	return SetEndOffsets{SequenceID: req.SequenceID, End: req.Offsets.Clone(), NextSequenceID: max(req.SequenceID+1, req.NextSequenceID)}
}

func newGroupHarness(t *testing.T, spec domain.Spec, end domain.Offsets, chunk int64) *groupHarness {
	t.Helper()
	env := newTestEnv(t)
	rec := &recorder{}
	h := &groupHarness{t: t, env: env, rec: rec, spec: spec, topic: &fakeTopic{rec: rec, chunk: chunk, end: end}}
	h.answer = func(req CheckpointRequest, _ int) []SetEndOffsets { return []SetEndOffsets{answerAt(req)} }
	env.RegisterWorkflowWithOptions(TaskGroupWorkflow, workflow.RegisterOptions{Name: TaskGroupWorkflowName})
	env.RegisterActivityWithOptions(h.topic.consume, activity.RegisterOptions{Name: protocol.ActivityConsume})
	env.RegisterActivityWithOptions(h.topic.publish, activity.RegisterOptions{Name: protocol.ActivityPublish})
	perChunk(env)
	// Reads take time on the workflow clock, as real ones do.
	env.OnActivity(protocol.ActivityConsume, mock.Anything, mock.Anything).Return(h.topic.consume).After(chunkTime)
	env.OnSignalExternalWorkflow(mock.Anything, SupervisorWorkflowID(spec.ID), "", mock.Anything, mock.Anything).
		Return(nil).
		Run(func(args mock.Arguments) {
			name, arg := args.String(3), args.Get(4)
			rec.add(event{kind: "signal", target: args.String(1), signal: name, arg: arg})
			if req, ok := arg.(CheckpointRequest); ok && name == SignalCheckpointRequest {
				h.requests++ // mock calls run one at a time: the workflow waits for each
				for _, a := range h.answer(req, h.requests) {
					env.SignalWorkflow(SignalSetEndOffsets, a)
				}
			}
		})
	return h
}

// at runs f once the workflow clock is d past the start.
func (h *groupHarness) at(d time.Duration, f func()) { h.env.RegisterDelayedCallback(f, d) }

func (h *groupHarness) signal(d time.Duration, name string, arg any) {
	h.at(d, func() { h.env.SignalWorkflow(name, arg) })
}

// run executes the workflow and requires that it completed without error.
func (h *groupHarness) run(in TaskGroupInput) {
	h.t.Helper()
	h.env.ExecuteWorkflow(TaskGroupWorkflowName, in)
	require.True(h.t, h.env.IsWorkflowCompleted(), "task group did not complete")
	require.NoError(h.t, h.env.GetWorkflowError())
}

// keysOf lists, in order, the staging keys the consumes of one sequence
// produced.
func keysOf(evs []event, sequenceName string) []string {
	var keys []string
	for _, e := range evs {
		if e.kind == "consume" && e.consume.SequenceName == sequenceName && e.consumed.StagingKey != "" {
			keys = append(keys, e.consumed.StagingKey)
		}
	}
	return keys
}

// positionAfter is the read position after the consumes among evs[:n],
// starting from start.
func positionAfter(evs []event, n int, start domain.Offsets) domain.Offsets {
	pos := start.Clone()
	for _, e := range evs[:n] {
		if e.kind == "consume" {
			for p, o := range e.consumed.To {
				pos[p] = o
			}
		}
	}
	return pos
}

// supervisorHarness runs a SupervisorWorkflow with stub activities and stub
// TaskGroup children. A child records what it gets and, once stopped,
// waits finishAfter[group] and signals group-finished.
type supervisorHarness struct {
	t    *testing.T
	env  *testsuite.TestWorkflowEnvironment
	spec domain.Spec

	discover     func(n int) (protocol.DiscoverResult, error)
	startOffsets protocol.StartOffsetsResult
	finishAfter  map[int]time.Duration

	mu             sync.Mutex
	discoverCalls  int
	startOffsCalls int
	children       []TaskGroupInput // every child start, in order
	childDone      map[string]bool
	childSignals   map[int][]childSignal
}

type childSignal struct {
	name   string
	setEnd SetEndOffsets // set-end-offsets
	reason string        // checkpoint
}

func newSupervisorHarness(t *testing.T, spec domain.Spec) *supervisorHarness {
	t.Helper()
	env := newTestEnv(t)
	// Children signal their parent by this id.
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: SupervisorWorkflowID(spec.ID), TaskQueue: TaskQueue})
	h := &supervisorHarness{
		t: t, env: env, spec: spec,
		finishAfter:  map[int]time.Duration{},
		childDone:    map[string]bool{},
		childSignals: map[int][]childSignal{},
	}
	env.RegisterWorkflowWithOptions(SupervisorWorkflow, workflow.RegisterOptions{Name: SupervisorWorkflowName})
	env.RegisterWorkflowWithOptions(h.child, workflow.RegisterOptions{Name: TaskGroupWorkflowName})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.DiscoverInput) (protocol.DiscoverResult, error) {
		h.mu.Lock()
		h.discoverCalls++
		n := h.discoverCalls
		h.mu.Unlock()
		return h.discover(n)
	}, activity.RegisterOptions{Name: protocol.ActivityDiscover})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.StartOffsetsInput) (protocol.StartOffsetsResult, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.startOffsCalls++
		return h.startOffsets, nil
	}, activity.RegisterOptions{Name: protocol.ActivityStartOffsets})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.RecordSpecInput) (protocol.RecordSpecResult, error) {
		return protocol.RecordSpecResult{Recorded: true, Version: 1}, nil
	}, activity.RegisterOptions{Name: protocol.ActivityRecordSpec})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.GroupStatesInput) (protocol.GroupStatesResult, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		res := protocol.GroupStatesResult{Running: map[string]bool{}}
		for _, id := range in.WorkflowIDs {
			started := false
			for _, c := range h.children {
				started = started || TaskGroupWorkflowID(c.Spec.ID, c.Group) == id
			}
			res.Running[id] = started && !h.childDone[id]
		}
		return res, nil
	}, activity.RegisterOptions{Name: protocol.ActivityGroupStates})
	return h
}

// child is the stub TaskGroup workflow.
func (h *supervisorHarness) child(ctx workflow.Context, in TaskGroupInput) error {
	id := TaskGroupWorkflowID(in.Spec.ID, in.Group)
	h.mu.Lock()
	h.children = append(h.children, in)
	h.mu.Unlock()
	record := func(s childSignal) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.childSignals[in.Group] = append(h.childSignals[in.Group], s)
	}
	setEndCh := workflow.GetSignalChannel(ctx, SignalSetEndOffsets)
	stopCh := workflow.GetSignalChannel(ctx, SignalGroupStop)
	checkpointCh := workflow.GetSignalChannel(ctx, SignalGroupCheckpoint)
	for stopped := false; !stopped; {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(setEndCh, func(c workflow.ReceiveChannel, _ bool) {
			var s SetEndOffsets
			c.Receive(ctx, &s)
			record(childSignal{name: SignalSetEndOffsets, setEnd: s})
		})
		sel.AddReceive(checkpointCh, func(c workflow.ReceiveChannel, _ bool) {
			var s GroupCheckpoint
			c.Receive(ctx, &s)
			record(childSignal{name: SignalGroupCheckpoint, reason: s.Reason})
		})
		sel.AddReceive(stopCh, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			record(childSignal{name: SignalGroupStop})
			stopped = true
		})
		sel.Select(ctx)
	}
	if d := h.finishAfter[in.Group]; d > 0 {
		if err := workflow.Sleep(ctx, d); err != nil {
			return err
		}
	}
	err := workflow.SignalExternalWorkflow(ctx, SupervisorWorkflowID(in.Spec.ID), "", SignalGroupFinished,
		GroupFinished{Group: in.Group, Generation: in.Generation}).Get(ctx, nil)
	h.mu.Lock()
	h.childDone[id] = true
	h.mu.Unlock()
	return err
}

func (h *supervisorHarness) at(d time.Duration, f func()) { h.env.RegisterDelayedCallback(f, d) }

func (h *supervisorHarness) signal(d time.Duration, name string, arg any) {
	h.at(d, func() { h.env.SignalWorkflow(name, arg) })
}

func (h *supervisorHarness) status() SupervisorStatus {
	h.t.Helper()
	v, err := h.env.QueryWorkflow(QueryStatus)
	require.NoError(h.t, err)
	var st SupervisorStatus
	require.NoError(h.t, v.Get(&st))
	return st
}

func (h *supervisorHarness) signalsTo(group int) []childSignal {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]childSignal(nil), h.childSignals[group]...)
}

func (h *supervisorHarness) started() []TaskGroupInput {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]TaskGroupInput(nil), h.children...)
}

func (h *supervisorHarness) discovers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.discoverCalls
}
