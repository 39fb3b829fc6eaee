package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
)

// txnFixture is a broker with a 1-partition topic and a client.
func txnFixture(t *testing.T, name string) (*kafkadev.Broker, *kafka.Client) {
	t.Helper()
	b, err := kafkadev.Start(ctxT(t), "127.0.0.1:0", map[string]int32{name: 1})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	c, err := kafka.New(b.Addrs())
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return b, c
}

// txnClient is a transactional kgo producer of partition 0 of topic.
func txnClient(t *testing.T, b *kafkadev.Broker, topic, id string, codec kgo.CompressionCodec) *kgo.Client {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codec)}
	if id != "" {
		opts = append(opts, kgo.TransactionalID(id))
	}
	cl, err := kgo.NewClient(opts...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

func send(t *testing.T, cl *kgo.Client, values ...string) {
	t.Helper()
	for _, v := range values {
		require.NoError(t, cl.ProduceSync(ctxT(t), &kgo.Record{Value: []byte(v)}).FirstErr(), "produce %s", v)
	}
}

func end(t *testing.T, cl *kgo.Client, commit bool) {
	t.Helper()
	how := kgo.TryAbort
	if commit {
		how = kgo.TryCommit
	}
	require.NoError(t, cl.EndTransaction(ctxT(t), how))
}

// readAll fetches the partition from 0 to its end as iso sees it, maxBytes
// at a time, and returns the values and the counts of the last walk.
func readAll(t *testing.T, c *kafka.Client, topic string, iso kafka.Isolation, maxBytes int) (values []string, markers, aborted int, last kafka.FetchResult) {
	t.Helper()
	next := int64(0)
	for range 1000 {
		res, err := c.Fetch(ctxT(t), kafka.FetchRequest{Topic: topic, Offset: next, MaxBytes: maxBytes, MaxWait: 50 * time.Millisecond, Isolation: iso})
		require.NoError(t, err)
		for _, r := range res.Records {
			values = append(values, string(r.Value))
		}
		markers += res.Markers
		aborted += res.Aborted
		require.GreaterOrEqual(t, res.Next, next)
		if res.Next == next && len(res.Records) == 0 {
			return values, markers, aborted, res
		}
		next = res.Next
		res.Recycle()
	}
	t.Fatal("the partition never ended")
	return
}

// interleave writes, to partition 0: two transactional producers whose
// transactions interleave, one of them with several transactions in turn
// committed and aborted, and plain records between. It returns what a
// read-committed reader must see, in order, and the aborted values.
func interleave(t *testing.T, b *kafkadev.Broker, topic string, codec kgo.CompressionCodec) (committed, abortedVals []string) {
	a := txnClient(t, b, topic, "a", codec)
	bb := txnClient(t, b, topic, "b", codec)
	plain := txnClient(t, b, topic, "", codec)
	send(t, plain, "p0")
	require.NoError(t, a.BeginTransaction())
	send(t, a, "a1", "a2")
	require.NoError(t, bb.BeginTransaction())
	send(t, bb, "b1")
	send(t, a, "a3")
	end(t, a, true)
	send(t, plain, "p1")
	send(t, bb, "b2")
	end(t, bb, false)
	require.NoError(t, a.BeginTransaction())
	send(t, a, "a4")
	end(t, a, false)
	require.NoError(t, a.BeginTransaction())
	send(t, a, "a5")
	end(t, a, true)
	require.NoError(t, a.BeginTransaction())
	send(t, a, "a6", "a7")
	end(t, a, false)
	require.NoError(t, bb.BeginTransaction())
	send(t, bb, "b3")
	end(t, bb, true)
	// Committed records are read in offset order: a1 and a2 went before
	// b1, a3 after it.
	return []string{"p0", "a1", "a2", "a3", "p1", "a5", "b3"}, []string{"b1", "b2", "a4", "a6", "a7"}
}

var codecs = []struct {
	name  string
	codec kgo.CompressionCodec
}{
	{"none", kgo.NoCompression()},
	{"gzip", kgo.GzipCompression()},
	{"snappy", kgo.SnappyCompression()},
	{"lz4", kgo.Lz4Compression()},
	{"zstd", kgo.ZstdCompression()},
}

// Read committed leaves out every aborted record and every marker, in any
// codec and however the answer is cut into fetches; read uncommitted reads
// every data record but still no marker.
func TestReadCommittedLeavesOutAbortedTransactions(t *testing.T) {
	t.Parallel()
	for _, cc := range codecs {
		t.Run(cc.name, func(t *testing.T) {
			t.Parallel()
			b, c := txnFixture(t, "tx")
			committed, aborted := interleave(t, b, "tx", cc.codec)
			for _, maxBytes := range []int{1 << 20, 1} {
				got, markers, nAborted, last := readAll(t, c, "tx", kafka.ReadCommitted, maxBytes)
				require.Equal(t, committed, got, "read committed, max bytes %d", maxBytes)
				require.Equal(t, 6, markers, "one marker per transaction")
				require.Equal(t, len(aborted), nAborted)
				require.Equal(t, last.HighWatermark, last.LastStableOffset, "no transaction is open")
				require.Equal(t, last.HighWatermark, last.Next, "the walk ends at the log end, past the last marker")

				got, markers, nAborted, _ = readAll(t, c, "tx", kafka.ReadUncommitted, maxBytes)
				want := append(slices.Clone(committed), aborted...)
				require.ElementsMatch(t, want, got, "read uncommitted, max bytes %d", maxBytes)
				require.Equal(t, 6, markers)
				require.Zero(t, nAborted)
			}
		})
	}
}

// An open transaction holds a read-committed reader at its first offset,
// plain records produced after it included, until it ends.
func TestOpenTransactionHoldsAtLastStableOffset(t *testing.T) {
	t.Parallel()
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			t.Parallel()
			b, c := txnFixture(t, "open")
			a := txnClient(t, b, "open", "a", kgo.NoCompression())
			plain := txnClient(t, b, "open", "", kgo.NoCompression())
			send(t, plain, "p0", "p1")
			require.NoError(t, a.BeginTransaction())
			send(t, a, "a1")
			send(t, plain, "p2")

			got, _, _, last := readAll(t, c, "open", kafka.ReadCommitted, 1<<20)
			require.Equal(t, []string{"p0", "p1"}, got)
			require.EqualValues(t, 2, last.LastStableOffset, "the open transaction begins at 2")
			require.EqualValues(t, 4, last.HighWatermark)
			require.EqualValues(t, 2, last.Next, "nothing at or past the last stable offset is read")
			require.EqualValues(t, 2, last.Latest(kafka.ReadCommitted))
			require.EqualValues(t, 4, last.Latest(kafka.ReadUncommitted))

			end(t, a, commit)
			got, markers, nAborted, last := readAll(t, c, "open", kafka.ReadCommitted, 1<<20)
			want := []string{"p0", "p1", "p2"}
			if commit {
				want = []string{"p0", "p1", "a1", "p2"}
			}
			require.Equal(t, want, got)
			require.Equal(t, 1, markers)
			require.Equal(t, map[bool]int{true: 0, false: 1}[commit], nAborted)
			require.EqualValues(t, 5, last.Next, "the marker moved the end")
		})
	}
}

// A fetch from the middle with a Stop ends at Stop even when a marker or an
// aborted batch spans it, and one that meets only markers moves on.
func TestFetchPassesMarkersWithinStop(t *testing.T) {
	t.Parallel()
	b, c := txnFixture(t, "stop")
	a := txnClient(t, b, "stop", "a", kgo.NoCompression())
	require.NoError(t, a.BeginTransaction())
	send(t, a, "a0") // offset 0
	end(t, a, true)  // marker at 1
	require.NoError(t, a.BeginTransaction())
	send(t, a, "a2") // 2, aborted
	end(t, a, false) // marker at 3

	res, err := c.Fetch(ctxT(t), kafka.FetchRequest{Topic: "stop", Offset: 1, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, res.Records)
	require.EqualValues(t, 4, res.Next, "a marker, an aborted record and its marker passed")
	require.Equal(t, 2, res.Markers)
	require.Equal(t, 1, res.Aborted)

	res, err = c.Fetch(ctxT(t), kafka.FetchRequest{Topic: "stop", Offset: 1, Stop: 3, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, res.Records)
	require.EqualValues(t, 3, res.Next, "never past Stop")
}

// A null value (a tombstone) stays nil, an empty one is empty and not nil.
func TestFetchKeepsNullAndEmptyValuesApart(t *testing.T) {
	t.Parallel()
	b, c := txnFixture(t, "tomb")
	plain := txnClient(t, b, "tomb", "", kgo.NoCompression())
	ctx := ctxT(t)
	require.NoError(t, plain.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: nil}).FirstErr())
	require.NoError(t, plain.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: []byte{}}).FirstErr())
	require.NoError(t, plain.ProduceSync(ctx, &kgo.Record{Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}).FirstErr())
	res, err := c.Fetch(ctx, kafka.FetchRequest{Topic: "tomb", MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Len(t, res.Records, 3)
	require.Nil(t, res.Records[0].Value)
	require.NotNil(t, res.Records[1].Value)
	require.Empty(t, res.Records[1].Value)
	require.Equal(t, "k", string(res.Records[1].Key))
	require.Nil(t, res.Records[2].Key)
	require.Equal(t, map[string]string{"h": "x"}, res.Records[2].Headers)
}

// Recycled buffers go to the next fetch: a fetch's values stay as they
// were until its own Recycle, whatever later fetches read.
func TestRecycleKeepsUnrecycledFetchesIntact(t *testing.T) {
	t.Parallel()
	b, c := txnFixture(t, "reuse")
	plain := txnClient(t, b, "reuse", "", kgo.ZstdCompression())
	for i := range 50 {
		send(t, plain, fmt.Sprintf("value-%02d", i))
	}
	ctx := context.Background()
	first, err := c.Fetch(ctx, kafka.FetchRequest{Topic: "reuse", Offset: 0, Stop: 10, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
	require.NoError(t, err)
	for i := 10; i < 50; i += 10 {
		res, err := c.Fetch(ctx, kafka.FetchRequest{Topic: "reuse", Offset: int64(i), Stop: int64(i + 10), MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
		require.NoError(t, err)
		require.Len(t, res.Records, 10)
		res.Recycle()
		res.Recycle() // twice is harmless
	}
	for i, r := range first.Records {
		require.Equal(t, fmt.Sprintf("value-%02d", i), string(r.Value))
	}
}

// A fetch parked at an open transaction's last stable offset with a long
// wait (a stream's quiet partition waits up to 4 s) is answered when the
// transaction ends, not when the wait runs out: committed, its records;
// aborted, the plain record behind it. Compressed batches too.
func TestParkedFetchAnswersWhenTheTransactionEnds(t *testing.T) {
	t.Parallel()
	const wait = 4 * time.Second
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			t.Parallel()
			b, c := txnFixture(t, "parked")
			a := txnClient(t, b, "parked", "a", kgo.ZstdCompression())
			plain := txnClient(t, b, "parked", "", kgo.Lz4Compression())
			send(t, plain, "p0", "p1")
			require.NoError(t, a.BeginTransaction())
			send(t, a, "a1", "a2")
			send(t, plain, "p2")

			how := map[bool]kgo.TransactionEndTry{true: kgo.TryCommit, false: kgo.TryAbort}[commit]
			ended := make(chan error, 1)
			go func() {
				time.Sleep(300 * time.Millisecond)
				ended <- a.EndTransaction(ctxT(t), how)
			}()
			began := time.Now()
			res, err := c.Fetch(ctxT(t), kafka.FetchRequest{Topic: "parked", Partition: 0, Offset: 2, MaxBytes: 1 << 20, MaxWait: wait, Isolation: kafka.ReadCommitted})
			took := time.Since(began)
			require.NoError(t, <-ended)
			require.NoError(t, err)
			defer res.Recycle()
			var got []string
			for _, r := range res.Records {
				got = append(got, string(r.Value))
			}
			want := []string{"p2"}
			if commit {
				want = []string{"a1", "a2", "p2"}
			}
			require.Equal(t, want, got)
			require.Less(t, took, wait/2, "answered when the transaction ended, not after the wait")
		})
	}
}

// feedValues reads feed until it has n values, failing after 10 s.
func feedValues(t *testing.T, next feedNext, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []string
	for len(got) < n {
		res, err := next(ctx)
		require.NoError(t, err, "after %v", got)
		for _, r := range res.Records {
			got = append(got, string(r.Value))
		}
		res.Recycle()
	}
	return got
}

// feedNext reads a feed's next answer.
type feedNext func(context.Context) (kafka.FetchResult, error)

// pollNext reads a feed of the set fs as a stream does: Poll, and wait on
// the set's Ready when nothing is there.
func pollNext(fs *kafka.Feeds, fd *kafka.Feed) feedNext {
	return func(ctx context.Context) (kafka.FetchResult, error) {
		for {
			if res, ok, err := fd.Poll(); ok || err != nil {
				return res, err
			}
			select {
			case <-fs.Ready():
			case <-ctx.Done():
				return kafka.FetchResult{}, ctx.Err()
			}
		}
	}
}

// Partitions read through the shared fetcher, in the same requests,
// leave out aborted transactions in every codec, and one held by an open
// transaction gives nothing past its last stable offset until the
// transaction ends, while its neighbour in the request reads on. So it
// goes for feeds read one by one (Next) and for a set read by one
// goroutine (Feeds, Poll), as a stream reads its partitions.
func TestFeedsReadCommittedTogether(t *testing.T) {
	t.Parallel()
	for _, cc := range codecs {
		for _, set := range []bool{false, true} {
			name := cc.name
			if set {
				name += "/set"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				b, err := kafkadev.Start(ctxT(t), "127.0.0.1:0", map[string]int32{"tx": 1, "open": 1})
				require.NoError(t, err)
				t.Cleanup(b.Close)
				c, err := kafka.New(b.Addrs())
				require.NoError(t, err)
				t.Cleanup(c.Close)
				committed, _ := interleave(t, b, "tx", cc.codec)
				a := txnClient(t, b, "open", "a", cc.codec)
				plain := txnClient(t, b, "open", "", cc.codec)
				send(t, plain, "p0", "p1")
				require.NoError(t, a.BeginTransaction())
				send(t, a, "a1")
				send(t, plain, "p2")

				fs := c.Feeds()
				follow := func(topic string) feedNext {
					r := kafka.FetchRequest{Topic: topic, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond,
						IdleWait: 200 * time.Millisecond, Isolation: kafka.ReadCommitted}
					if !set {
						feed := c.Follow(r)
						t.Cleanup(feed.Close)
						return feed.Next
					}
					feed := fs.Follow(r)
					t.Cleanup(feed.Close)
					return pollNext(fs, feed)
				}
				tx, open := follow("tx"), follow("open")
				require.Equal(t, committed, feedValues(t, tx, len(committed)))
				require.Equal(t, []string{"p0", "p1"}, feedValues(t, open, 2))

				send(t, plain, "late") // to the open transaction's partition: held too
				time.Sleep(500 * time.Millisecond)
				ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
				res, err := open(ctx) // at most the held partition's new ends
				cancel()
				if err == nil {
					require.Empty(t, res.Records, "nothing past the open transaction's first offset")
					require.EqualValues(t, 2, res.Next)
					res.Recycle()
				}

				end(t, a, true)
				require.Equal(t, []string{"a1", "p2", "late"}, feedValues(t, open, 3))
			})
		}
	}
}
