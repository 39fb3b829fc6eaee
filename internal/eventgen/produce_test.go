package eventgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/eventgen"
	"handoff/internal/kafkadev"
)

const partitions = 4

func broker(t *testing.T, topic string) []string {
	t.Helper()
	b, err := kafkadev.Start(t.Context(), "127.0.0.1:0", map[string]int32{topic: partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b.Addrs()
}

// readAll consumes want records from the start of topic and returns how many
// times each id appeared, how many records each partition held, and each
// record's key.
func readAll(t *testing.T, brokers []string, topic string, want int) (ids map[string]int, perPartition map[int32]int, keys map[string]string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ids, perPartition, keys = map[string]int{}, map[int32]int{}, map[string]string{}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	n := 0
	for n < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var e struct{ ID string }
			if err := json.Unmarshal(r.Value, &e); err != nil {
				t.Errorf("record %s: %v", r.Value, err)
			}
			ids[e.ID]++
			perPartition[r.Partition]++
			keys[e.ID] = string(r.Key)
			n++
		})
	}
	// Anything past want is a duplicate; give it a moment to show up.
	extra, cancel2 := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel2()
	cl.PollFetches(extra).EachRecord(func(r *kgo.Record) { t.Errorf("extra record %s", r.Value) })
	return ids, perPartition, keys
}

func TestProduceEveryIDOnce(t *testing.T) {
	t.Parallel()
	for _, withKeys := range []bool{false, true} {
		t.Run(fmt.Sprintf("keys=%v", withKeys), func(t *testing.T) {
			t.Parallel()
			const n = 10_000
			brokers := broker(t, "wiki")
			g := eventgen.New("run", 1)
			sent, err := g.Produce(t.Context(), brokers, "wiki", 0, n, withKeys)
			if err != nil || sent != n {
				t.Fatalf("Produce = %d, %v; want %d, nil", sent, err, n)
			}
			ids, perPartition, keys := readAll(t, brokers, "wiki", n)
			if len(ids) != n {
				t.Fatalf("read %d distinct ids, want %d", len(ids), n)
			}
			for i := range n {
				id := fmt.Sprintf("run-%d", i)
				if ids[id] != 1 {
					t.Fatalf("id %s read %d times", id, ids[id])
				}
				if wantKey := map[bool]string{true: id}[withKeys]; keys[id] != wantKey {
					t.Fatalf("id %s has key %q, want %q", id, keys[id], wantKey)
				}
			}
			for p := range int32(partitions) {
				if c := perPartition[p]; c < n/partitions/2 {
					t.Errorf("partition %d got %d of %d records: not spread", p, c, n)
				}
			}
		})
	}
}

func TestProduceContinuesIDsAcrossCalls(t *testing.T) {
	t.Parallel()
	brokers := broker(t, "t")
	g := eventgen.New("again", 1)
	for range 2 {
		if sent, err := g.Produce(t.Context(), brokers, "t", 0, 50, false); err != nil || sent != 50 {
			t.Fatalf("Produce = %d, %v", sent, err)
		}
	}
	if ids, _, _ := readAll(t, brokers, "t", 100); len(ids) != 100 {
		t.Fatalf("read %d distinct ids, want 100", len(ids))
	}
}

func TestProduceKeepsRate(t *testing.T) {
	t.Parallel()
	brokers := broker(t, "t")
	start := time.Now()
	sent, err := eventgen.New("rate", 1).Produce(t.Context(), brokers, "t", 200, 41, false)
	if err != nil || sent != 41 {
		t.Fatalf("Produce = %d, %v", sent, err)
	}
	// The 41st event is due 200ms after the first.
	if d := time.Since(start); d < 190*time.Millisecond || d > 2*time.Second {
		t.Fatalf("41 events at 200/s took %v, want about 200ms", d)
	}
}

func TestProduceUntilCancelCountsOnlyAcked(t *testing.T) {
	t.Parallel()
	brokers := broker(t, "t")
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	sent, err := eventgen.New("cancel", 1).Produce(ctx, brokers, "t", 1000, 0, false)
	if err != nil {
		t.Fatalf("Produce until cancel: %v", err)
	}
	if sent < 50 {
		t.Fatalf("sent only %d in 300ms at 1000/s", sent)
	}
	if ids, _, _ := readAll(t, brokers, "t", int(sent)); len(ids) != int(sent) {
		t.Fatalf("Produce said %d, topic holds %d", sent, len(ids))
	}
}

func TestProduceWithLimitReportsCancel(t *testing.T) {
	t.Parallel()
	brokers := broker(t, "t")
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	sent, err := eventgen.New("short", 1).Produce(ctx, brokers, "t", 100, 1000, false)
	if err == nil || sent >= 1000 {
		t.Fatalf("Produce = %d, %v; want fewer than 1000 and an error", sent, err)
	}
}

func TestProduceRefusesBadArguments(t *testing.T) {
	t.Parallel()
	g := eventgen.New("bad", 1)
	for name, call := range map[string]func() error{
		"no brokers": func() error { _, err := g.Produce(t.Context(), nil, "t", 0, 1, false); return err },
		"no topic":   func() error { _, err := g.Produce(t.Context(), []string{"x:1"}, "", 0, 1, false); return err },
		"rate":       func() error { _, err := g.Produce(t.Context(), []string{"x:1"}, "t", -1, 1, false); return err },
		"limit":      func() error { _, err := g.Produce(t.Context(), []string{"x:1"}, "t", 0, -1, false); return err },
	} {
		if call() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
