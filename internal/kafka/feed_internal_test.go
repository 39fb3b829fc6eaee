package kafka

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/kafkadev"
)

// feedFixture starts a broker with topics a and b of 4 partitions and c of
// 1, and returns a client that counts the connections it opens.
func feedFixture(t *testing.T) (*kafkadev.Broker, *Client, *atomic.Int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{"a": 4, "b": 4, "c": 1})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	c, err := New(b.Addrs())
	require.NoError(t, err)
	t.Cleanup(c.Close)
	dials := &atomic.Int64{}
	c.transport.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return b, c, dials
}

func producer(t *testing.T, b *kafkadev.Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

func produce(t *testing.T, cl *kgo.Client, topic string, partition int32, values ...string) {
	t.Helper()
	for _, v := range values {
		require.NoError(t, cl.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v)}).FirstErr())
	}
}

func valuesOf(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, from+i)
	}
	return out
}

// follow reads feed until ctx ends, sending each record's value on out.
func follow(ctx context.Context, feed *Feed, out chan<- string, errs chan<- error) {
	defer feed.Close()
	for {
		res, err := feed.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				errs <- err
			}
			return
		}
		for _, r := range res.Records {
			out <- string(r.Value)
		}
		res.Recycle()
	}
}

// Every partition a client follows is read in shared requests: nine
// partitions of three topics, one of them transactional, are each read
// exactly once (no aborted record), then, idle, cost a few requests a
// second between them over a few connections, not a request per
// partition; a record produced later arrives at once.
func TestFeedsShareRequests(t *testing.T) {
	t.Parallel()
	b, c, dials := feedFixture(t)
	plain := producer(t, b)
	want := map[string]int{}
	for _, topic := range []string{"a", "b"} {
		for p := range int32(4) {
			vs := valuesOf(fmt.Sprintf("%s%d-", topic, p), 0, 50)
			produce(t, plain, topic, p, vs...)
			for _, v := range vs {
				want[v] = 1
			}
		}
	}
	txn := producer(t, b, kgo.TransactionalID("feeds"))
	for i, commit := range []bool{true, false, true} {
		require.NoError(t, txn.BeginTransaction())
		vs := valuesOf(fmt.Sprintf("c%d-", i), 0, 5)
		produce(t, txn, "c", 0, vs...)
		how := kgo.TryAbort
		if commit {
			how = kgo.TryCommit
			for _, v := range vs {
				want[v] = 1
			}
		}
		require.NoError(t, txn.EndTransaction(t.Context(), how))
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan string, 1000)
	errs := make(chan error, 10)
	var wg sync.WaitGroup
	for _, tp := range []partitionKey{{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}, {"b", 0}, {"b", 1}, {"b", 2}, {"b", 3}, {"c", 0}} {
		feed := c.Follow(FetchRequest{Topic: tp.topic, Partition: tp.partition, MaxBytes: 1 << 20,
			MaxWait: 100 * time.Millisecond, IdleWait: time.Second, Isolation: ReadCommitted})
		wg.Go(func() { follow(ctx, feed, got, errs) })
	}
	seen := map[string]int{}
	for len(seen) < len(want) {
		select {
		case v := <-got:
			seen[v]++
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(20 * time.Second):
			t.Fatalf("read %d of %d values", len(seen), len(want))
		}
	}

	before := c.fetches.Load()
	time.Sleep(3 * time.Second)
	idle := c.fetches.Load() - before
	// One partition fetched alone, waiting as the shared requests do,
	// would take 4 or more requests in 3 s; nine of them 36 or more.
	t.Logf("%d fetch requests in 3 idle seconds, %d connections", idle, dials.Load())
	require.LessOrEqual(t, idle, int64(12), "fetch requests in 3 idle seconds")
	require.Greater(t, idle, int64(0))

	produce(t, plain, "b", 2, "late")
	want["late"] = 1
	select {
	case v := <-got:
		seen[v]++
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(5 * time.Second):
		t.Fatal("a record produced while idle did not arrive")
	}
	require.Equal(t, want, seen)
	require.LessOrEqual(t, dials.Load(), int64(maxRounds+2), "connections opened")

	cancel()
	wg.Wait()
	require.Eventually(t, func() bool {
		c.fetcher.mu.Lock()
		defer c.fetcher.mu.Unlock()
		return !c.fetcher.running && len(c.fetcher.feeds) == 0
	}, 10*time.Second, 50*time.Millisecond, "the fetcher's loop ends when nothing is followed")
}

// A feed stops at its Stop, and two feeds of one partition read each from
// its own offset.
func TestFeedsOfOnePartitionAndStop(t *testing.T) {
	t.Parallel()
	b, c, _ := feedFixture(t)
	produce(t, producer(t, b), "a", 1, valuesOf("v", 0, 20)...)
	read := func(feed *Feed, stop int64) []string {
		defer feed.Close()
		var vs []string
		for {
			res, err := feed.Next(t.Context())
			require.NoError(t, err)
			for _, r := range res.Records {
				vs = append(vs, string(r.Value))
			}
			res.Recycle()
			if res.Next >= stop {
				return vs
			}
		}
	}
	var got [2][]string
	var wg sync.WaitGroup
	for i, from := range []int64{0, 12} {
		feed := c.Follow(FetchRequest{Topic: "a", Partition: 1, Offset: from, Stop: from + 5, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
		wg.Go(func() { got[i] = read(feed, from+5) })
	}
	wg.Wait()
	require.Equal(t, valuesOf("v", 0, 5), got[0])
	require.Equal(t, valuesOf("v", 12, 5), got[1])
}

// A feed of a topic that does not exist fails with ErrTopicNotFound, and
// the feeds beside it read on.
func TestFeedOfMissingTopicFailsAlone(t *testing.T) {
	t.Parallel()
	b, c, _ := feedFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan string, 10)
	errs := make(chan error, 10)
	for _, topic := range []string{"a", "nope"} {
		feed := c.Follow(FetchRequest{Topic: topic, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond, IdleWait: time.Second})
		go follow(ctx, feed, got, errs)
	}
	select {
	case err := <-errs:
		require.ErrorIs(t, err, ErrTopicNotFound)
		require.ErrorContains(t, err, "nope")
	case <-time.After(20 * time.Second):
		t.Fatal("the missing topic's feed did not fail")
	}
	produce(t, producer(t, b), "a", 0, "x")
	select {
	case v := <-got:
		require.Equal(t, "x", v)
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("the feed beside the missing topic's stopped reading")
	}
}

// A partition whose next batch is larger than its bound gets it even
// behind another partition of the same request (a broker returns such a
// batch whole only first in an answer): it is fetched again alone.
func TestFeedGetsBatchLargerThanItsBound(t *testing.T) {
	t.Parallel()
	b, c, _ := feedFixture(t)
	produce(t, producer(t, b), "a", 0, "small")
	big := producer(t, b, kgo.ProducerBatchMaxBytes(4<<20))
	value := make([]byte, 2<<20)
	_, _ = rand.Read(value) // incompressible: the batch stays over 1 MiB
	require.NoError(t, big.ProduceSync(t.Context(), &kgo.Record{Topic: "a", Partition: 1, Value: value}).FirstErr())
	feed := func(p int32) *Feed {
		return &Feed{f: c.fetcher, req: FetchRequest{Topic: "a", Partition: p, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond},
			wait: 50 * time.Millisecond, signal: make(chan struct{}, 1), inFlight: true,
			seen: watermarks{-1, -1}, told: watermarks{-1, -1}}
	}
	first, second := feed(0), feed(1) // partition 0 first in the request
	c.fetcher.together(t.Context(), []*Feed{first, second})
	for _, fd := range []*Feed{first, second} {
		res, err := fd.Next(t.Context())
		require.NoError(t, err)
		require.Len(t, res.Records, 1, "partition %d", fd.req.Partition)
		res.Recycle()
	}
}

// Feeds of one set are read by one goroutine, woken by Ready: every
// record of three partitions arrives once and in order per partition,
// including one produced while all were idle, and a feed at its Stop
// answers Poll with an empty answer at the Stop.
func TestFeedsReadByOneGoroutine(t *testing.T) {
	t.Parallel()
	b, c, _ := feedFixture(t)
	plain := producer(t, b)
	for p := range int32(3) {
		produce(t, plain, "a", p, valuesOf(fmt.Sprintf("a%d-", p), 0, 30)...)
	}
	set := c.Feeds()
	var feeds []*Feed
	for p := range int32(3) {
		r := FetchRequest{Topic: "a", Partition: p, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond, IdleWait: time.Second}
		if p == 2 {
			r.Stop = 10
		}
		feeds = append(feeds, set.Follow(r))
	}
	defer func() {
		for _, fd := range feeds {
			fd.Close()
		}
	}()
	got := map[int32][]string{}
	atStop := false
	// take polls every feed until none has anything.
	take := func() {
		for {
			moved := false
			for p, fd := range feeds {
				if p == 2 && atStop {
					continue // at its Stop it answers every Poll
				}
				res, ok, err := fd.Poll()
				require.NoError(t, err)
				if !ok {
					continue
				}
				moved = true
				for _, r := range res.Records {
					got[int32(p)] = append(got[int32(p)], string(r.Value))
				}
				if p == 2 && res.Next == 10 && len(res.Records) == 0 {
					atStop = true
				}
				res.Recycle()
			}
			if !moved {
				return
			}
		}
	}
	wait := func(done func() bool, what string) {
		deadline := time.After(20 * time.Second)
		for !done() {
			select {
			case <-set.Ready():
				take()
			case <-deadline:
				t.Fatalf("%s: read %v", what, got)
			}
		}
	}
	wait(func() bool { return len(got[0]) == 30 && len(got[1]) == 30 && atStop }, "the backlog")
	require.Equal(t, valuesOf("a0-", 0, 30), got[0])
	require.Equal(t, valuesOf("a1-", 0, 30), got[1])
	require.Equal(t, valuesOf("a2-", 0, 10), got[2], "up to its Stop")

	produce(t, plain, "a", 1, "late")
	wait(func() bool { return len(got[1]) == 31 }, "a record produced while idle")
	require.Equal(t, "late", got[1][30])
	require.Len(t, got[0], 30)
	require.Len(t, got[2], 10)
}
