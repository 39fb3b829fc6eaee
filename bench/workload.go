package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/eventgen"
)

// The backlog's events: about 150 bytes of JSON each, a unique id, a
// timestamp spread evenly over two hours, five dimensions of mixed
// cardinality (3 devices, 5 actions, 8 browsers, 30 countries and 1,000
// pages, all but devices skewed like real popularity, pages steeply) and
// two metrics. At minute granularity rollup folds about 1.7 events into
// a row: the page keeps most combinations apart.
const backlogSpan = 2 * time.Hour

var (
	benchActions   = []string{"edit", "create", "revert", "move", "delete"}
	benchDevices   = []string{"desktop", "mobile", "app"}
	benchBrowsers  = []string{"chrome", "safari", "edge", "firefox", "samsung", "opera", "uc", "other"}
	benchCountries = []string{
		"US", "GB", "DE", "IN", "FR", "JP", "CA", "AU", "BR", "IT",
		"ES", "RU", "NL", "PL", "SE", "MX", "KR", "ID", "TR", "UA",
		"AR", "CH", "NO", "FI", "ZA", "NG", "EG", "VN", "NZ", "IE",
	}
)

const benchPages = 1000

// backlog makes the events of one run; event i belongs to partition
// i % partitions, so each partition's timestamps only move forward.
type backlog struct {
	n          int64
	partitions int
	start      time.Time // the first event's time
	rng        *rand.Rand
	buf        []byte
}

func newBacklog(n int64, partitions int, end time.Time) *backlog {
	return &backlog{
		n: n, partitions: partitions,
		start: end.Add(-backlogSpan).Truncate(time.Hour),
		rng:   rand.New(rand.NewPCG(20261203, 7)),
	}
}

// event returns event i's JSON; the slice is reused by the next call.
func (b *backlog) event(i int64) []byte {
	ts := b.start.Add(time.Duration(float64(backlogSpan) * float64(i) / float64(b.n))).UTC()
	r := b.rng
	action := benchActions[skewed(r, len(benchActions), 3)]
	e := b.buf[:0]
	e = append(e, `{"id":"e`...)
	e = strconv.AppendInt(e, i, 10)
	e = append(e, `","ts":"`...)
	e = ts.AppendFormat(e, "2006-01-02T15:04:05.000Z")
	e = append(e, `","page":"P`...)
	e = strconv.AppendInt(e, int64(skewed(r, benchPages, 8)), 10)
	e = append(e, `","browser":"`...)
	e = append(e, benchBrowsers[skewed(r, len(benchBrowsers), 4)]...)
	e = append(e, `","country":"`...)
	e = append(e, benchCountries[skewed(r, len(benchCountries), 4)]...)
	e = append(e, `","device":"`...)
	e = append(e, benchDevices[skewed(r, len(benchDevices), 2)]...)
	e = append(e, `","action":"`...)
	e = append(e, action...)
	e = append(e, `","delta":`...)
	e = strconv.AppendInt(e, int64(r.IntN(2001)-1000), 10)
	e = append(e, `,"bytes":`...)
	e = strconv.AppendInt(e, int64(r.IntN(100_000)), 10)
	e = append(e, '}')
	b.buf = e
	return e
}

// skewed returns an index in [0, n), low ones far more likely for k > 1.
func skewed(r *rand.Rand, n int, k float64) int {
	return min(int(float64(n)*math.Pow(r.Float64(), k)), n-1)
}

// produceBacklog sends every event of b to topic, batched as Kafka's own
// producer does by default (batch.size 16 KiB, linger.ms 5, no
// compression), and returns the total bytes of the values.
func produceBacklog(ctx context.Context, brokers []string, topic string, b *backlog) (int64, error) {
	return produceValues(ctx, brokers, topic, b, func(i int64) ([]byte, error) { return append([]byte(nil), b.event(i)...), nil })
}

// produceValues sends value(i) for every event i of b as produceBacklog
// does.
func produceValues(ctx context.Context, brokers []string, topic string, b *backlog, value func(i int64) ([]byte, error)) (int64, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(16<<10),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(100_000),
	)
	if err != nil {
		return 0, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	var acks eventgen.Acks
	var bytes int64
	for i := range b.n {
		if i%10_000 == 0 && (ctx.Err() != nil || acks.Failed()) {
			break
		}
		v, err := value(i)
		if err != nil {
			return 0, fmt.Errorf("event %d: %w", i, err)
		}
		bytes += int64(len(v))
		cl.Produce(ctx, &kgo.Record{Value: v, Partition: int32(i % int64(b.partitions))}, acks.Done)
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, fmt.Errorf("produce to %s: %w", topic, err)
	}
	if err := acks.Err(); err != nil {
		return 0, fmt.Errorf("produce to %s: %w", topic, err)
	}
	if acks.Sent() != b.n {
		return 0, fmt.Errorf("produce to %s: %d of %d events acknowledged", topic, acks.Sent(), b.n)
	}
	return bytes, nil
}
