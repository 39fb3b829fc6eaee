package cli

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"handoff/internal/kafkadev"
)

// kafka starts an in-process broker with topic t of 2 partitions and
// returns its address.
func kafka(t *testing.T) string {
	t.Helper()
	b, err := kafkadev.Start(t.Context(), "127.0.0.1:0", map[string]int32{"t": 2})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return b.Addrs()[0]
}

// topicPartitions is how many partitions topic has, 0 if it does not exist.
func topicPartitions(t *testing.T, broker, topic string) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	require.NoError(t, err)
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(t.Context(), cl)
	require.NoError(t, err)
	require.Len(t, resp.Topics, 1)
	if resp.Topics[0].ErrorCode != 0 {
		return 0
	}
	return len(resp.Topics[0].Partitions)
}

// readTopic reads every message of topic, per partition in order, and
// returns the values and how many each partition holds.
func readTopic(t *testing.T, broker, topic string) (values []string, perPartition map[int32]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()

	// How many there are: the end offset of each partition.
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range int32(topicPartitions(t, broker, topic)) {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1 // latest
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	require.NoError(t, err)
	total := int64(0)
	for _, p := range resp.Topics[0].Partitions {
		require.Zero(t, p.ErrorCode)
		total += p.Offset
	}

	perPartition = map[int32]int{}
	for int64(len(values)) < total {
		fetches := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "read %d of %d messages", len(values), total)
		require.Empty(t, fetches.Errors())
		fetches.EachRecord(func(r *kgo.Record) {
			values = append(values, string(r.Value))
			perPartition[r.Partition]++
		})
	}
	return values, perPartition
}

func TestProduceSendsEachLineOfAFile(t *testing.T) {
	t.Parallel()
	broker := kafka(t)
	path := writeFile(t, "{\"id\": 1, \"page\": \"a\"}\n\n  \n{\"id\": 2}\r\n[3, \"x\"]\n\"four\"\n{\"id\": 5}") // blank lines, CRLF, no final newline
	r := runCLI(t, runOpts{}, "produce", "--topic", "t", "-f", path, "--brokers", broker)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "5 messages acknowledged by topic t\n", r.stdout)
	assert.Empty(t, r.stderr)

	values, perPartition := readTopic(t, broker, "t")
	slices.Sort(values)
	assert.Equal(t, []string{`"four"`, `[3, "x"]`, `{"id": 1, "page": "a"}`, `{"id": 2}`, `{"id": 5}`}, values)
	assert.Equal(t, map[int32]int{0: 3, 1: 2}, perPartition, "round-robin over the partitions")
}

func TestProduceFromStdinJSON(t *testing.T) {
	t.Parallel()
	broker := kafka(t)
	// KAFKA_BROKERS stands in for --brokers.
	r := runCLI(t, runOpts{env: map[string]string{"KAFKA_BROKERS": broker}, stdin: "{\"a\": 1}\n{\"a\": 2}\n"},
		"produce", "--topic", "t", "-f", "-", "-o", "json", "--rate", "100")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"topic": "t", "sent": 2}`, r.stdout)
	values, _ := readTopic(t, broker, "t")
	assert.ElementsMatch(t, []string{`{"a": 1}`, `{"a": 2}`}, values)
}

func TestProduceStopsAtAnInvalidLine(t *testing.T) {
	t.Parallel()
	broker := kafka(t)
	path := writeFile(t, "{\"id\": 1}\n\n{\"id\": 2}\n{\"id\": 3,\n{\"id\": 4}\n")
	r := runCLI(t, runOpts{}, "produce", "--topic", "t", "-f", path, "--brokers", broker)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "error: "+path+" line 4 is not valid JSON (unexpected end of JSON input): nothing after it was sent (--allow-invalid sends such lines anyway); 2 before it acknowledged\n")
	assert.NotContains(t, r.stderr, "--help")
	assert.Empty(t, r.stdout)
	values, _ := readTopic(t, broker, "t")
	assert.ElementsMatch(t, []string{`{"id": 1}`, `{"id": 2}`}, values, "the lines before it, nothing after")
}

func TestProduceAllowInvalidSendsBadLines(t *testing.T) {
	t.Parallel()
	broker := kafka(t)
	stdin := "{\"id\": 1}\nnot json\n{\"id\": 3}\n"
	r := runCLI(t, runOpts{stdin: stdin}, "produce", "--topic", "t", "-f", "-", "--brokers", broker, "--allow-invalid")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "3 messages acknowledged by topic t (1 not valid JSON, sent with --allow-invalid)\n", r.stdout)
	assert.Contains(t, r.stderr, "stdin line 2 is not valid JSON (invalid character 'o' in literal null (expecting 'u')): sending it anyway (--allow-invalid)\n")

	r = runCLI(t, runOpts{stdin: stdin}, "produce", "--topic", "t", "-f", "-", "--brokers", broker, "--allow-invalid", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"topic": "t", "sent": 3, "invalid": 1}`, r.stdout)

	values, _ := readTopic(t, broker, "t")
	assert.ElementsMatch(t, []string{`{"id": 1}`, `not json`, `{"id": 3}`, `{"id": 1}`, `not json`, `{"id": 3}`}, values)
}

func TestProduceGeneratesSampleEvents(t *testing.T) {
	t.Parallel()
	broker := kafka(t)
	r := runCLI(t, runOpts{}, "produce", "--topic", "t", "--generate", "20", "--run-id", "r1", "--brokers", broker)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "20 generated events acknowledged by topic t (run id r1: event ids r1-0 to r1-19)\n", r.stdout)

	// Without --run-id, the run id is the time.
	r = runCLI(t, runOpts{now: steppingClock(watchStart, time.Second)},
		"produce", "--topic", "t", "--generate", "5", "--brokers", broker, "--rate", "1000", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"topic": "t", "sent": 5, "runId": "20260102T030405.000Z"}`, r.stdout)

	values, perPartition := readTopic(t, broker, "t")
	require.Len(t, values, 25)
	assert.Len(t, perPartition, 2)
	var ids []string
	for _, v := range values {
		var e struct {
			ID, TS, Page, User, Country, Action string
			Delta                               *int64
		}
		require.NoError(t, json.Unmarshal([]byte(v), &e), v)
		assert.True(t, e.TS != "" && e.Page != "" && e.User != "" && e.Country != "" && e.Action != "" && e.Delta != nil, v)
		ids = append(ids, e.ID)
	}
	var want []string
	for i := range 20 {
		want = append(want, "r1-"+strconv.Itoa(i))
	}
	for i := range 5 {
		want = append(want, "20260102T030405.000Z-"+strconv.Itoa(i))
	}
	assert.ElementsMatch(t, want, ids)
}

func TestProduceToAMissingTopic(t *testing.T) {
	t.Parallel()
	broker := kafka(t)
	r := runCLI(t, runOpts{stdin: "{}\n"}, "produce", "--topic", "new", "-f", "-", "--brokers", broker)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "error: topic new does not exist on "+broker+": create it, or pass --partitions P to create it with P partitions\n")
	assert.Zero(t, topicPartitions(t, broker, "new"))

	r = runCLI(t, runOpts{stdin: "{}\n{}\n"}, "produce", "--topic", "new", "-f", "-", "--brokers", broker, "--partitions", "3")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "created topic new with 3 partitions\n2 messages acknowledged by topic new\n", r.stdout)
	assert.Equal(t, 3, topicPartitions(t, broker, "new"))

	// Once it exists, --partitions changes nothing.
	r = runCLI(t, runOpts{}, "produce", "--topic", "new", "--generate", "1", "--brokers", broker, "--partitions", "3", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got produceResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Zero(t, got.CreatedPartitions)
	r = runCLI(t, runOpts{}, "produce", "--topic", "new", "--generate", "1", "--brokers", broker, "--partitions", "5", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "topic new exists with 3 partitions: --partitions 5 changes nothing")
	assert.Equal(t, 3, topicPartitions(t, broker, "new"))

	values, _ := readTopic(t, broker, "new")
	assert.Len(t, values, 4)

	r = runCLI(t, runOpts{stdin: "{}\n"}, "produce", "--topic", "other", "-f", "-", "--brokers", broker, "--partitions", "1", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"topic": "other", "sent": 1, "createdPartitions": 1}`, r.stdout)
}

func TestProduceUnreachableKafkaNamesTheBrokers(t *testing.T) {
	t.Parallel()
	r := runCLI(t, runOpts{env: map[string]string{"KAFKA_BROKERS": "127.0.0.1:1, u:secret@127.0.0.1:2"}}, "produce", "--topic", "t", "--generate", "1")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "error: cannot reach Kafka at 127.0.0.1:1,u:xxxxx@127.0.0.1:2 (set --brokers or KAFKA_BROKERS)")
	assert.NotContains(t, r.stderr, "secret")
	assert.Empty(t, r.stdout)
}

func TestProduceMissingFile(t *testing.T) {
	t.Parallel()
	broker := kafka(t)
	r := runCLI(t, runOpts{}, "produce", "--topic", "t", "-f", "testdata/nope.jsonl", "--brokers", broker)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "testdata/nope.jsonl")
}

func TestProduceStopsOnCtrlC(t *testing.T) {
	t.Parallel()
	broker := kafka(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// A stdin that never ends, as a terminal's: Ctrl-C still ends produce.
	in, w := io.Pipe()
	defer w.Close()
	go func() {
		_, _ = io.WriteString(w, "{\"n\": 1}\n{\"n\": 2}\n")
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	r := runCLI(t, runOpts{ctx: ctx, in: in}, "produce", "--topic", "t", "-f", "-", "--brokers", broker)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "error: produce to t: interrupted after 2 acknowledged: context canceled\n")
	values, _ := readTopic(t, broker, "t")
	assert.ElementsMatch(t, []string{`{"n": 1}`, `{"n": 2}`}, values)
}
