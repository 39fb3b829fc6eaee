package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
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

// ErrOffsetOutOfRange is returned (wrapped) when the offset is before the
// partition's earliest or after its latest offset.
var ErrOffsetOutOfRange = errors.New("offset out of range")

// Fetch reads records of one partition starting at offset, at most maxBytes,
// waiting at most maxWait for data to arrive. Records before offset (a batch
// may start earlier) and at or past stop (when stop > 0) are dropped.
func (c *Client) Fetch(ctx context.Context, topic string, partition int32, offset, stop int64, maxBytes int, maxWait time.Duration) (FetchResult, error) {
	req := &kafkago.FetchRequest{
		Topic: topic, Partition: int(partition), Offset: offset,
		MinBytes: 1, MaxBytes: int64(maxBytes), MaxWait: maxWait,
	}
	res, err := c.c.Fetch(ctx, req)
	if unknownTopic(err) {
		// The cached metadata may predate the topic or partition.
		c.refresh()
		res, err = c.c.Fetch(ctx, req)
	}
	if unknownTopic(err) {
		return FetchResult{}, fmt.Errorf("fetch %s[%d]@%d: %w", topic, partition, offset, ErrTopicNotFound)
	}
	if err != nil {
		return FetchResult{}, fmt.Errorf("fetch %s[%d]@%d: %w", topic, partition, offset, err)
	}
	if res.Error != nil {
		if errors.Is(res.Error, kafkago.OffsetOutOfRange) {
			return FetchResult{}, fmt.Errorf("fetch %s[%d]@%d (log start %d, high watermark %d): %w",
				topic, partition, offset, res.LogStartOffset, res.HighWatermark, ErrOffsetOutOfRange)
		}
		return FetchResult{}, fmt.Errorf("fetch %s[%d]@%d: %w", topic, partition, offset, res.Error)
	}
	out := FetchResult{Next: offset, HighWatermark: res.HighWatermark}
	for {
		r, err := res.Records.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return FetchResult{}, fmt.Errorf("read records of %s[%d]@%d: %w", topic, partition, offset, err)
		}
		if r.Offset < offset || (stop > 0 && r.Offset >= stop) {
			continue
		}
		rec := Record{Offset: r.Offset, Time: r.Time}
		if rec.Value, err = readBytes(r.Value); err != nil {
			return FetchResult{}, fmt.Errorf("read value of %s[%d]@%d: %w", topic, partition, r.Offset, err)
		}
		if rec.Key, err = readBytes(r.Key); err != nil {
			return FetchResult{}, fmt.Errorf("read key of %s[%d]@%d: %w", topic, partition, r.Offset, err)
		}
		for _, h := range r.Headers {
			if rec.Headers == nil {
				rec.Headers = map[string]string{}
			}
			rec.Headers[h.Key] = string(h.Value)
		}
		out.Records = append(out.Records, rec)
		out.Next = r.Offset + 1
	}
	return out, nil
}

func readBytes(b interface {
	io.Reader
	Len() int
}) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	buf := make([]byte, b.Len())
	_, err := io.ReadFull(b, buf)
	return buf, err
}

// unknownTopic reports whether err says the topic or partition is unknown;
// kafka-go words that differently depending on where it found out.
func unknownTopic(err error) bool {
	return err != nil && (errors.Is(err, kafkago.UnknownTopicOrPartition) || strings.Contains(err.Error(), "topic not found") ||
		strings.Contains(err.Error(), "unknown topic"))
}
