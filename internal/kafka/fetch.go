package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// Record is one message read from a partition.
type Record struct {
	Offset  int64
	Time    time.Time
	Key     []byte
	Value   []byte
	Headers map[string]string
}

// FetchResult is what one fetch of one partition returned.
type FetchResult struct {
	Records []Record
	// Next is the offset to read next: one past the last record returned, or
	// the requested offset when nothing was returned.
	Next int64
	// HighWatermark is the partition's end as the broker saw it.
	HighWatermark int64
}

// recordSlices keeps the Records slices of used-up fetches for the next
// ones: growing a fresh slice to a 4 MiB fetch's ~25,000 records allocated
// more than decoding them did (BenchmarkFetch).
var recordSlices sync.Pool // *[]Record, empty

// Recycle hands the fetch's Records slice to the next fetch once nothing
// reads it any more. The records' Key, Value and Headers are not reused:
// what was kept of them stays valid.
func (r FetchResult) Recycle() {
	if cap(r.Records) == 0 {
		return
	}
	recs := r.Records
	clear(recs) // drop the references to the records' bytes
	recs = recs[:0]
	recordSlices.Put(&recs)
}

// ErrOffsetOutOfRange is returned (wrapped) when the offset is before the
// partition's earliest or after its latest offset.
var ErrOffsetOutOfRange = errors.New("offset out of range")

// fetchSlack is how much longer than maxWait a fetch may take before its
// connection is given up: the broker's answer plus the transfer.
const fetchSlack = 30 * time.Second

// Fetch reads records of one partition starting at offset, at most maxBytes,
// waiting at most maxWait for data to arrive. Records before offset (a batch
// may start earlier) and at or past stop (when stop > 0) are dropped.
//
// It reads straight off a connection to the partition's leader, kept from
// one fetch to the next: kafka-go's fastest path, the one the benchmark's
// ceiling uses. A leader that moved or a topic created since the last
// lookup costs one new connection and a second try.
func (c *Client) Fetch(ctx context.Context, topic string, partition int32, offset, stop int64, maxBytes int, maxWait time.Duration) (FetchResult, error) {
	k := partitionKey{topic, partition}
	res, err := c.fetchOnce(ctx, k, offset, stop, maxBytes, maxWait)
	if retryable(err) && ctx.Err() == nil {
		c.refresh()
		res, err = c.fetchOnce(ctx, k, offset, stop, maxBytes, maxWait)
	}
	switch {
	case err == nil:
		return res, nil
	case unknownTopic(err):
		return FetchResult{}, fmt.Errorf("fetch %s[%d]@%d: %w", topic, partition, offset, ErrTopicNotFound)
	case errors.Is(err, kafkago.OffsetOutOfRange):
		return FetchResult{}, fmt.Errorf("fetch %s[%d]@%d (high watermark %d): %w",
			topic, partition, offset, res.HighWatermark, ErrOffsetOutOfRange)
	case ctx.Err() != nil:
		return FetchResult{}, fmt.Errorf("fetch %s[%d]@%d: %w", topic, partition, offset, ctx.Err())
	default:
		return FetchResult{}, fmt.Errorf("fetch %s[%d]@%d: %w", topic, partition, offset, c.auth.explain(err))
	}
}

// retryable: errors after which a fresh connection to a freshly looked-up
// leader may succeed.
func retryable(err error) bool {
	return unknownTopic(err) || errors.Is(err, kafkago.NotLeaderForPartition) ||
		errors.Is(err, kafkago.LeaderNotAvailable) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func (c *Client) fetchOnce(ctx context.Context, k partitionKey, offset, stop int64, maxBytes int, maxWait time.Duration) (res FetchResult, err error) {
	conn := c.conns.takeIdle(k)
	if conn == nil {
		// A leader lookup for a missing topic waits out the dial timeout:
		// ask the metadata first, which answers at once.
		ps, err := c.partitions(ctx, k.topic)
		if err != nil {
			return FetchResult{}, err
		}
		if !slices.Contains(ps, k.partition) {
			return FetchResult{}, fmt.Errorf("topic %q has no partition %d: %w", k.topic, k.partition, kafkago.UnknownTopicOrPartition)
		}
		if conn, err = c.conns.dial(ctx, k); err != nil {
			return FetchResult{}, err
		}
	}
	// A cancel ends a wait on the connection at once; the connection is
	// then in an unknown state and closed.
	cancelled := false
	stopWatch := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stopWatch() {
			cancelled = true
		}
		if err != nil || cancelled {
			_ = conn.Close()
			return
		}
		c.conns.put(k, conn)
	}()
	if err := conn.SetDeadline(time.Now().Add(maxWait + fetchSlack)); err != nil {
		return FetchResult{}, err
	}
	if _, err := conn.Seek(offset, kafkago.SeekAbsolute|kafkago.SeekDontCheck); err != nil {
		return FetchResult{}, err
	}
	b := conn.ReadBatchWith(kafkago.ReadBatchConfig{MinBytes: 1, MaxBytes: maxBytes, MaxWait: maxWait})
	res = FetchResult{Next: offset, HighWatermark: b.HighWaterMark()}
	if p, ok := recordSlices.Get().(*[]Record); ok {
		res.Records = *p
	}
	for {
		m, err := b.ReadMessage()
		if err != nil {
			cerr := b.Close()
			if errors.Is(err, io.EOF) {
				err = cerr
			}
			if errors.Is(err, kafkago.RequestTimedOut) {
				// kafka-go's word for an empty answer after maxWait.
				err = nil
			}
			if err != nil {
				return res, err
			}
			break
		}
		if m.Offset < offset || (stop > 0 && m.Offset >= stop) {
			continue
		}
		rec := Record{Offset: m.Offset, Time: m.Time, Key: m.Key, Value: m.Value}
		if len(m.Headers) > 0 {
			rec.Headers = make(map[string]string, len(m.Headers))
			for _, h := range m.Headers {
				rec.Headers[h.Key] = string(h.Value)
			}
		}
		res.Records = append(res.Records, rec)
		res.Next = m.Offset + 1
	}
	return res, nil
}

// unknownTopic reports whether err says the topic or partition is unknown;
// kafka-go words that differently depending on where it found out.
func unknownTopic(err error) bool {
	return err != nil && (errors.Is(err, kafkago.UnknownTopicOrPartition) || strings.Contains(err.Error(), "topic not found") ||
		strings.Contains(err.Error(), "unknown topic"))
}
