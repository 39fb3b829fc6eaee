package activities_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/testsuite"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
	"handoff/internal/protocol"
	"handoff/internal/segment"
	"handoff/internal/storage"
	"handoff/internal/wakeup"
)

// jsonTopic gives acts a one-partition topic "json" holding n JSON events
// and a staging directory.
func jsonTopic(t *testing.T, acts *activities.Activities, n int) (*storage.Local, *kgo.Client) {
	t.Helper()
	b, err := kafkadev.Start(context.Background(), "127.0.0.1:0", map[string]int32{"json": 1})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("json"))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	produceJSON(t, cl, 0, n)
	acts.Kafka, err = kafka.New(b.Addrs())
	require.NoError(t, err)
	staging, err := storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	acts.Staging = staging
	return staging, cl
}

// streamFixture: jsonTopic, and a wakeup hub.
func streamFixture(t *testing.T, n int) (*activities.Activities, *storage.Local, *kgo.Client) {
	t.Helper()
	acts, _ := fixture(t)
	staging, cl := jsonTopic(t, acts, n)
	acts.Wakeups = wakeup.Start(acts.Store.Pool(), slog.New(slog.DiscardHandler))
	t.Cleanup(acts.Wakeups.Close)
	return acts, staging, cl
}

func produceJSON(t *testing.T, cl *kgo.Client, from, n int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"ts":%d,"a":"x%d","v":1}`, time.Now().UnixMilli(), i)})
	}
	require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
}

// runStream runs ConsumeStream in a test activity environment.
func runStream(t *testing.T, acts *activities.Activities, in protocol.ConsumeStreamInput) protocol.ConsumeStreamResult {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts.Register(env)
	v, err := env.ExecuteActivity(protocol.ActivityConsumeStream, in)
	require.NoError(t, err)
	var res protocol.ConsumeStreamResult
	require.NoError(t, v.Get(&res))
	return res
}

// stagedRows reads every chunk back and counts its rows.
func stagedRows(t *testing.T, staging *storage.Local, res protocol.ConsumeStreamResult) int {
	t.Helper()
	n := 0
	for _, c := range res.Chunks {
		_, rows, err := segment.ReadFile(staging.Path(c.Key))
		require.NoError(t, err)
		require.Len(t, rows, int(c.Rows))
		n += len(rows)
	}
	return n
}

// TestStreamReturnsWhenItsWorkerStops: two streams of one worker return
// once the worker begins to stop, each with what it read staged, and a
// stream started after the stop returns at once.
func TestStreamReturnsWhenItsWorkerStops(t *testing.T) {
	t.Parallel()
	acts, staging, cl := streamFixture(t, 500)
	spec := boundsSpec("json")
	stopping := make(chan struct{})
	run := func(name string) protocol.ConsumeStreamResult {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.SetWorkerStopChannel(stopping)
		acts.Register(env)
		v, err := env.ExecuteActivity(protocol.ActivityConsumeStream, protocol.ConsumeStreamInput{
			Spec: spec, SequenceName: name, From: domain.Offsets{domain.P(0): 0}, MaxRun: time.Minute,
		})
		require.NoError(t, err)
		var res protocol.ConsumeStreamResult
		require.NoError(t, v.Get(&res))
		return res
	}
	go func() {
		time.Sleep(700 * time.Millisecond)
		produceJSON(t, cl, 500, 300)
		time.Sleep(700 * time.Millisecond)
		close(stopping)
	}()
	start := time.Now()
	results := make(chan protocol.ConsumeStreamResult, 2)
	for _, name := range []string{"bounds_g0_s0", "bounds_g1_s0"} {
		go func() { results <- run(name) }()
	}
	for range 2 {
		res := <-results
		require.Equal(t, protocol.StreamWorkerStop, res.Reason)
		require.Equal(t, domain.Offsets{domain.P(0): 800}, res.To, "read everything produced before the stop")
		require.Equal(t, 800, stagedRows(t, staging, res))
	}
	require.Less(t, time.Since(start), 10*time.Second, "stopped, not timed out")
	late := run("bounds_g2_s0")
	require.Equal(t, protocol.StreamWorkerStop, late.Reason, "a stream that starts on a stopping worker returns")
}

// TestStreamReturnsWhenWoken: a stream on a topic that keeps getting
// records returns once woken, with every record it read staged in chunks
// whose files hold exactly the rows it reports.
func TestStreamReturnsWhenWoken(t *testing.T) {
	t.Parallel()
	acts, staging, cl := streamFixture(t, 500)
	spec := boundsSpec("json")
	go func() {
		time.Sleep(700 * time.Millisecond)
		produceJSON(t, cl, 500, 300)
		time.Sleep(700 * time.Millisecond)
		_ = acts.Wakeups.Wake(context.Background(), "g/run/stream-1")
	}()
	start := time.Now()
	res := runStream(t, acts, protocol.ConsumeStreamInput{
		Spec: spec, SequenceName: "bounds_g0_s0", From: domain.Offsets{domain.P(0): 0},
		WakeKey: "g/run/stream-1", MaxRun: time.Minute,
	})
	require.Equal(t, protocol.StreamWoken, res.Reason)
	require.Less(t, time.Since(start), 10*time.Second, "woken, not timed out")
	require.Equal(t, domain.Offsets{domain.P(0): 800}, res.To, "read everything produced before the wake")
	require.Equal(t, int64(800), res.Records)
	require.Equal(t, int64(800), res.Rows)
	require.Equal(t, 800, stagedRows(t, staging, res))
}

// TestStreamReturnsOnAHandoffTrigger: maxRowsPerSegment closes the open
// sequence from inside the stream.
func TestStreamReturnsOnAHandoffTrigger(t *testing.T) {
	t.Parallel()
	acts, staging, _ := streamFixture(t, 1000)
	spec := boundsSpec("json")
	spec.TuningConfig.MaxRowsPerSegment = 300
	spec.TuningConfig.MaxRecordsPerChunk = 100
	res := runStream(t, acts, protocol.ConsumeStreamInput{
		Spec: spec, SequenceName: "bounds_g0_s0", From: domain.Offsets{domain.P(0): 0}, MaxRun: time.Minute,
		Close: &protocol.CloseTriggers{OpenedAt: time.Now()},
	})
	require.Equal(t, protocol.StreamMaxRows, res.Reason)
	require.GreaterOrEqual(t, res.Rows, int64(300))
	require.Equal(t, int(res.Rows), stagedRows(t, staging, res))
	require.Equal(t, res.Records, res.To[domain.P(0)], "every record read is staged")
	require.GreaterOrEqual(t, len(res.Chunks), 3, "chunks of at most maxRecordsPerChunk")
}

// TestStreamReadsAClosedSequenceToItsEnd: with Until, the stream stops
// exactly there and returns at once.
func TestStreamReadsAClosedSequenceToItsEnd(t *testing.T) {
	t.Parallel()
	acts, staging, _ := streamFixture(t, 400)
	res := runStream(t, acts, protocol.ConsumeStreamInput{
		Spec: boundsSpec("json"), SequenceName: "bounds_g0_s0", From: domain.Offsets{domain.P(0): 100},
		Until: domain.Offsets{domain.P(0): 250}, MaxRun: time.Minute,
	})
	require.Equal(t, protocol.StreamUntil, res.Reason)
	require.Equal(t, domain.Offsets{domain.P(0): 250}, res.To)
	require.Equal(t, 150, stagedRows(t, staging, res))
}

// TestStreamReturnsWhenQuietAfterABurst: once a burst is read and nothing
// more arrives, the stream returns so its group records where it is.
func TestStreamReturnsWhenQuietAfterABurst(t *testing.T) {
	t.Parallel()
	acts, _, _ := streamFixture(t, 200)
	res := runStream(t, acts, protocol.ConsumeStreamInput{
		Spec: boundsSpec("json"), SequenceName: "bounds_g0_s0", From: domain.Offsets{domain.P(0): 0},
		MaxRun: time.Minute, QuietAfter: 500 * time.Millisecond, MinRun: time.Second,
	})
	require.Equal(t, protocol.StreamQuiet, res.Reason)
	require.Equal(t, domain.Offsets{domain.P(0): 200}, res.To)
}

// TestRetriedStreamResumesFromItsHeartbeat: a retried stream keeps the
// chunks its last heartbeat listed and reads on from there, not from its
// input's start.
func TestRetriedStreamResumesFromItsHeartbeat(t *testing.T) {
	t.Parallel()
	acts, _, _ := streamFixture(t, 400)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts.Register(env)
	staged := protocol.ConsumeStreamResult{
		To: domain.Offsets{domain.P(0): 300}, Records: 300, Rows: 300, Bytes: 999,
		Chunks: []protocol.ChunkRef{{Key: "bounds/bounds_g0_s0/p0-0_earlier.run", Rows: 300, Bytes: 999}},
	}
	env.SetHeartbeatDetails(map[string]any{"state": "reading", "offsets": domain.Offsets{domain.P(0): 320}, "staged": staged})
	v, err := env.ExecuteActivity(protocol.ActivityConsumeStream, protocol.ConsumeStreamInput{
		Spec: boundsSpec("json"), SequenceName: "bounds_g0_s0", From: domain.Offsets{domain.P(0): 0},
		Until: domain.Offsets{domain.P(0): 400}, MaxRun: time.Minute,
	})
	require.NoError(t, err)
	var res protocol.ConsumeStreamResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, domain.Offsets{domain.P(0): 400}, res.To)
	require.Equal(t, int64(400), res.Records, "300 staged before, 100 read now: nothing read twice")
	require.Equal(t, staged.Chunks[0], res.Chunks[0], "the earlier chunk is kept")
	require.Len(t, res.Chunks, 2)
}
