package kafkadev_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/kafkadev"
)

func start(t *testing.T, topics map[string]int32) *kafkadev.Broker {
	t.Helper()
	b, err := kafkadev.Start(t.Context(), "127.0.0.1:0", topics)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

func TestStartPicksFreePortAndSeedsTopics(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]int32{"events": 3})
	addrs := b.Addrs()
	if len(addrs) != 1 || !strings.HasPrefix(addrs[0], "127.0.0.1:") || addrs[0] == "127.0.0.1:0" {
		t.Fatalf("addrs = %v, want one 127.0.0.1 address with a real port", addrs)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics("events"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for p := range int32(3) {
		rec := &kgo.Record{Topic: "events", Partition: p, Value: []byte{byte('a' + p)}}
		if err := cl.ProduceSync(t.Context(), rec).FirstErr(); err != nil {
			t.Fatalf("produce to partition %d: %v", p, err)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got := map[string]int32{}
	for len(got) < 3 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Value)] = r.Partition })
	}
	want := map[string]int32{"a": 0, "b": 1, "c": 2}
	for k, p := range want {
		if gp, ok := got[k]; !ok || gp != p {
			t.Fatalf("read back %v, want %v", got, want)
		}
	}
}

func TestCreateTopicVisibleToKafkaGo(t *testing.T) {
	t.Parallel()
	b := start(t, nil)
	if err := b.CreateTopic(t.Context(), "wiki", 4); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(t.Context(), "wiki", 4); err == nil {
		t.Fatal("creating an existing topic succeeded")
	}
	if err := b.CreateTopic(t.Context(), "none", 0); err == nil {
		t.Fatal("creating a topic with 0 partitions succeeded")
	}

	conn, err := kafka.DialContext(t.Context(), "tcp", b.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	parts, err := conn.ReadPartitions("wiki")
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 4 {
		t.Fatalf("kafka-go sees %d partitions, want 4", len(parts))
	}
}

func TestStartRefusesBadArguments(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "127.0.0.1", "127.0.0.1:x"} {
		if b, err := kafkadev.Start(t.Context(), addr, nil); err == nil {
			b.Close()
			t.Errorf("Start(%q) succeeded", addr)
		}
	}
	if b, err := kafkadev.Start(t.Context(), "127.0.0.1:0", map[string]int32{"t": 0}); err == nil {
		b.Close()
		t.Error("Start with a 0-partition topic succeeded")
	}
}

func TestStartFailsOnTakenPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if b, err := kafkadev.Start(t.Context(), ln.Addr().String(), nil); err == nil {
		b.Close()
		t.Fatal("Start on a taken port succeeded")
	}
}
