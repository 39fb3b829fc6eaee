package cli

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"handoff/internal/domain"
	"handoff/internal/kafkadev"
	"handoff/workflows"
)

// noKafka points status at a port nothing listens on: the latest offsets
// are then the supervisor's, whatever runs on this machine.
var noKafka = map[string]string{"KAFKA_BROKERS": "127.0.0.1:1"}

// maskKafkaError hides why Kafka did not answer (the OS's words).
func maskKafkaError(s string) string {
	return regexp.MustCompile(`\(not read from Kafka: .*\); current`).ReplaceAllString(s, "(…); current")
}

// consuming describes a group's workflow with a running activity of type
// kind that last heartbeat offsets at t.
func consuming(t *testing.T, kind string, offsets domain.Offsets, at time.Time) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	details, err := converter.GetDefaultDataConverter().ToPayloads(map[string]any{"state": "reading", "offsets": offsets, "rows": 10, "bytes": 100})
	require.NoError(t, err)
	return &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: []*workflowpb.PendingActivityInfo{{
		ActivityType: &commonpb.ActivityType{Name: kind}, HeartbeatDetails: details, LastHeartbeatTime: timestamppb.New(at),
	}}}
}

// produceTo writes n records to each partition of topic.
func produceTo(t *testing.T, brokers []string, topic string, n map[int32]int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for p, k := range n {
		for range k {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(`{}`)})
		}
	}
	require.NoError(t, cl.ProduceSync(t.Context(), recs...).FirstErr())
}

// Issue 13: the supervisor's latest offsets are as old as its last look at
// Kafka, its current ones as old as its groups' last report, so status
// showed CURRENT 7649 beyond LATEST 7542. status reads the latest offsets
// from Kafka when asked and the current ones from the consumes'
// heartbeats, and works lag (latest − current) and unpublished (current −
// committed) out from them, saying when each was read.
func TestStatusReadsLatestFromKafkaAndCurrentFromHeartbeats(t *testing.T) {
	t.Parallel()
	b, err := kafkadev.Start(t.Context(), "127.0.0.1:0", map[string]int32{"orders": 3})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	produceTo(t, b.Addrs(), "orders", map[int32]int{0: 170, 1: 45, 2: 7})

	beat := watchStart.Add(-3 * time.Second)
	fc := &fakeClient{status: sampleStatus(), executions: map[string]*workflowservice.DescribeWorkflowExecutionResponse{
		"supervisor/orders/group-0": consuming(t, "Consume", domain.Offsets{domain.P(0): 160, domain.P(2): 5}, beat),
		// A publish heartbeats its sequence's end: not a read position.
		"supervisor/orders/group-1": consuming(t, "Publish", domain.Offsets{domain.P(1): 999}, beat),
	}}
	env := map[string]string{"KAFKA_BROKERS": b.Addrs()[0]}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), env: env, now: func() time.Time { return watchStart }}, "status", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `
PARTITION  COMMITTED  CURRENT  LATEST  LAG  UNPUBLISHED
0          100        160      170     10   60
1          40         40       45      5    0
2          -          5        7       2    5
total                                  17   65
LAG = LATEST − CURRENT, in Kafka and not read yet; UNPUBLISHED = CURRENT − COMMITTED, read and not published yet
latest read from Kafka at 2026-01-02T03:04:05Z; current: the supervisor's and the consumes' heartbeats, the last at 2026-01-02T03:04:02Z
`)

	r = runCLI(t, runOpts{dial: dialTo(fc, nil), env: env, now: func() time.Time { return watchStart }}, "status", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got freshStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, domain.Offsets{domain.P(0): 160, domain.P(1): 40, domain.P(2): 5}, got.Current)
	assert.Equal(t, domain.Offsets{domain.P(0): 170, domain.P(1): 45, domain.P(2): 7}, got.Latest)
	assert.Equal(t, map[domain.Partition]int64{domain.P(0): 10, domain.P(1): 5, domain.P(2): 2}, got.PartitionLag)
	assert.Equal(t, map[domain.Partition]int64{domain.P(0): 60, domain.P(1): 0, domain.P(2): 5}, got.PartitionUnpublished)
	assert.Equal(t, int64(17), got.Lag)
	assert.Equal(t, int64(65), got.Unpublished)
	assert.Equal(t, latestFromKafka, got.LatestFrom)
	assert.Equal(t, watchStart, got.LatestAt)
	assert.Equal(t, beat, got.HeartbeatAt.UTC())
	assert.Empty(t, got.KafkaError)
	assert.Empty(t, got.LatestRaised)
}

// Without Kafka the latest offsets are the supervisor's, with their age;
// one a heartbeat has passed shows at current, marked, never below it.
func TestStatusWithoutKafkaNeverShowsCurrentBeyondLatest(t *testing.T) {
	t.Parallel()
	st := sampleStatus()
	st.LatestAt = watchStart.Add(-25 * time.Second)
	fc := &fakeClient{status: st, executions: map[string]*workflowservice.DescribeWorkflowExecutionResponse{
		"supervisor/orders/group-0": consuming(t, "ConsumeStream", domain.Offsets{domain.P(0): 150, domain.P(2): 7}, watchStart.Add(-time.Second)),
	}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), env: noKafka, now: func() time.Time { return watchStart }}, "status", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, maskKafkaError(r.stdout), `
PARTITION  COMMITTED  CURRENT  LATEST  LAG  UNPUBLISHED
0          100        150      150*    0    50
1          40         40       40      0    0
2          -          7        7       0    7
total                                  0    57
LAG = LATEST − CURRENT, in Kafka and not read yet; UNPUBLISHED = CURRENT − COMMITTED, read and not published yet
* the latest offset was read before the group got past it: shown at CURRENT
latest: the supervisor's, read 25s ago (2026-01-02T03:03:40Z) (…); current: the supervisor's and the consumes' heartbeats, the last at 2026-01-02T03:04:04Z
`)
	assert.Regexp(t, `not read from Kafka: .*127\.0\.0\.1:1`, r.stdout, "says why Kafka was not read")

	r = runCLI(t, runOpts{dial: dialTo(fc, nil), env: noKafka}, "status", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, latestFromSupervisor, got["latestFrom"])
	assert.Equal(t, []any{0.0}, got["latestRaised"])
	assert.Equal(t, map[string]any{"0": 150.0, "1": 40.0, "2": 7.0}, got["latestOffsets"])
	assert.Equal(t, 57.0, got["aggregateUnpublished"])
	assert.NotEmpty(t, got["kafkaError"])
}

// stop --wait's final report takes its lag from Kafka's latest offsets,
// not from the supervisor's last look: a stop that left records unread
// says how many.
func TestStopWaitReportsLagFromKafka(t *testing.T) {
	t.Parallel()
	b, err := kafkadev.Start(t.Context(), "127.0.0.1:0", map[string]int32{"orders": 3})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	produceTo(t, b.Addrs(), "orders", map[int32]int{0: 170, 1: 45, 2: 7})
	st := sampleStatus()
	st.State = workflows.StateStopped
	fc := &fakeClient{describe: completed(), status: st, updateResult: workflows.OperationResult{State: workflows.StateStopping}}
	env := map[string]string{"KAFKA_BROKERS": b.Addrs()[0]}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), env: env, now: func() time.Time { return watchStart }}, "stop", "orders", "--wait", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got stopResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.NotNil(t, got.Final)
	assert.Equal(t, latestFromKafka, got.LatestFrom)
	assert.Equal(t, domain.Offsets{domain.P(0): 170, domain.P(1): 45, domain.P(2): 7}, got.Final.Latest)
	assert.Equal(t, int64(170-120+45-40+7-3), got.Final.Lag, "latest from Kafka − the supervisor's current")

	r = runCLI(t, runOpts{dial: dialTo(fc, nil), env: env, now: func() time.Time { return watchStart }}, "stop", "orders", "--wait")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "latest read from Kafka at 2026-01-02T03:04:05Z")
}
