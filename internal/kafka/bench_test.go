package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/eventgen"
	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
)

// events is how many events the fetch benchmarks read.
const events = 200_000

// benchBroker starts a broker holding events of the benchmark's shape in
// the one partition of topic "bench", and returns its addresses.
func benchBroker(ctx context.Context, b *testing.B) []string {
	br, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{"bench": 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(br.Close)
	if _, err := eventgen.New("bench", 1).Produce(ctx, br.Addrs(), "bench", 0, events, false); err != nil {
		b.Fatal(err)
	}
	return br.Addrs()
}

// benchClient starts benchBroker and returns a client of it, both closed
// with b, and reports allocations.
func benchClient(b *testing.B) (context.Context, *kafka.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	b.Cleanup(cancel)
	c, err := kafka.New(benchBroker(ctx, b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	b.ReportAllocs()
	return ctx, c
}

// BenchmarkFetch is the breakdown's fetch-and-decode stage: Fetch reading
// one partition of the benchmark's events (~156 B, unkeyed) in 4 MiB
// fetches, as a stream's fetcher does. The in-process broker answering
// runs in the same process, so ns/record includes its side of each fetch;
// the bench's worker profile counts the worker's side only.
func BenchmarkFetch(b *testing.B) {
	ctx, c := benchClient(b)
	var records, bytes int64
	offset := int64(0)
	for b.Loop() {
		if offset >= events {
			offset = 0
		}
		res, err := c.Fetch(ctx, kafka.FetchRequest{Topic: "bench", Partition: 0, Offset: offset, MaxBytes: 4 << 20, MaxWait: 100 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Records) == 0 {
			b.Fatalf("no records at offset %d", offset)
		}
		for _, r := range res.Records {
			bytes += int64(len(r.Value))
		}
		records += int64(len(res.Records))
		offset = res.Next
		res.Recycle() // as a stream does once it parsed the batch
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
	b.ReportMetric(float64(bytes)/float64(records), "B/record")
	b.ReportMetric(0, "ns/op") // one op is one fetch of varying size: ns/record is the figure
}

// BenchmarkFetchFranzGo is the same read by franz-go's consumer (kgo, as
// a direct-partition consumer, 4 MiB fetches): the yardstick for the
// fetch stage's implementation. Each op reads the 200,000 events once
// with a new client; ns/record includes the broker's side, as in
// BenchmarkFetch.
func BenchmarkFetchFranzGo(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	brokers := benchBroker(ctx, b)
	b.ReportAllocs()
	var records int64
	for b.Loop() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"bench": {0: kgo.NewOffset().At(0)}}),
			kgo.FetchMaxBytes(4<<20), kgo.FetchMaxPartitionBytes(4<<20), kgo.FetchMaxWait(100*time.Millisecond))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for n < events {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				b.Fatal(err)
			}
			n += fs.NumRecords()
		}
		cl.Close()
		records += int64(n)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFollow is the fetch-and-decode stage as a stream now reads:
// through the client's shared fetcher (Follow), 1 MiB answers, one kept
// ahead of the reader. Each op reads the 200,000 events once with a new
// feed; ns/record includes the broker's side, as in BenchmarkFetch.
func BenchmarkFollow(b *testing.B) {
	ctx, c := benchClient(b)
	var records int64
	for b.Loop() {
		feed := c.Follow(kafka.FetchRequest{Topic: "bench", Partition: 0, Stop: events, MaxBytes: 1 << 20,
			MaxWait: 100 * time.Millisecond, IdleWait: time.Second})
		for next := int64(0); next < events; {
			res, err := feed.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			records += int64(len(res.Records))
			next = res.Next
			res.Recycle()
		}
		feed.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
	b.ReportMetric(0, "ns/op") // one op is one read of every event: ns/record is the figure
}
