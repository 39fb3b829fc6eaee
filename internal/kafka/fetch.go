package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
)

// Record is one message read from a partition. A nil Value is a null value
// (a tombstone); an empty one is non-nil with length 0. Key and Value are
// slices of the fetch's buffers, valid until its Recycle; Headers are
// copies.
type Record struct {
	Offset  int64
	Time    time.Time
	Key     []byte
	Value   []byte
	Headers map[string]string
}

// FetchRequest asks for the records of one partition from Offset on.
type FetchRequest struct {
	Topic     string
	Partition int32
	Offset    int64
	// Stop, when above 0, is where reading ends: records at or past it are
	// dropped, and Next never passes it.
	Stop int64
	// MaxBytes bounds the answer (the broker still returns a first batch
	// larger than it), and MaxWait how long the broker waits for data.
	MaxBytes int
	MaxWait  time.Duration
	// Isolation is read committed unless set otherwise.
	Isolation Isolation
	// IdleWait, when above MaxWait, is how long a Feed's wait grows to:
	// it doubles after each answer that found nothing, and is MaxWait
	// again after one that moved.
	IdleWait time.Duration
}

// FetchResult is what one fetch of one partition returned.
type FetchResult struct {
	// Records are the data records from the requested offset on: never a
	// transaction marker, and under read committed never a record of an
	// aborted transaction nor one at or past the last stable offset.
	Records []Record
	// Next is the offset to read next: one past the last record, marker or
	// aborted batch the fetch passed (at most Stop), or the requested
	// offset when it passed nothing. It can move without Records: a fetch
	// that met only markers or aborted records still moves on.
	Next int64
	// HighWatermark is the partition's end as the broker saw it, and
	// LastStableOffset the first offset of its oldest open transaction (the
	// high watermark when none is open; -1 when the broker did not say).
	HighWatermark    int64
	LastStableOffset int64
	// Markers counts the transaction markers (control records) passed, and
	// Aborted the records of aborted transactions left out.
	Markers, Aborted int

	bufs *fetchBufs
}

// Latest is the partition's end as a reader at iso sees it: the last
// stable offset under read committed (nothing at or past it can be read
// yet), else the high watermark.
func (r FetchResult) Latest(iso Isolation) int64 {
	if iso == ReadCommitted && r.LastStableOffset >= 0 {
		return r.LastStableOffset
	}
	return r.HighWatermark
}

// recordSlices keeps the Records slices of used-up fetches for the next
// ones: growing a fresh slice to a 4 MiB fetch's ~25,000 records allocated
// more than decoding them did (BenchmarkFetch).
var recordSlices sync.Pool // *[]Record, empty

// decompressedBufs keeps the buffers compressed batches were read into.
var decompressedBufs sync.Pool // *[]byte

// fetchBufs are the buffers a fetch's records point into.
type fetchBufs struct {
	answer       *answerRef // the response, shared by its partitions
	decompressed []byte     // this partition's compressed batches, uncompressed
	recycled     bool
}

// Recycle hands the fetch's buffers to the next fetches once nothing reads
// its records any more: their Key and Value are slices of those buffers,
// so whatever must outlive the fetch (a dead letter, a saved parse error)
// is copied before. Headers are copies and stay valid.
func (r FetchResult) Recycle() {
	if b := r.bufs; b != nil {
		if b.recycled {
			return // a copy of r was recycled: the buffers may be in use again
		}
		b.recycled = true
		b.answer.release()
		if cap(b.decompressed) > 0 {
			d := b.decompressed[:0]
			decompressedBufs.Put(&d)
		}
	}
	if cap(r.Records) > 0 {
		recs := r.Records
		clear(recs) // drop the references to the records' bytes
		recs = recs[:0]
		recordSlices.Put(&recs)
	}
}

// ErrOffsetOutOfRange is returned (wrapped) when the offset is before the
// partition's earliest or after its latest offset.
var ErrOffsetOutOfRange = errors.New("offset out of range")

// requestMaxBytes bounds a whole fetch answer, Kafka consumers'
// fetch.max.bytes default; the partition's own bound (FetchRequest.MaxBytes)
// is what limits a one-partition fetch. Keeping the whole far above it
// also matters to kfake, which leaves the aborted transactions out of a
// partition's answer when the answer's whole bound cut it short.
const requestMaxBytes = 50 << 20

// fetchSlack is how much longer than maxWait a fetch may take before it is
// given up: the broker's answer plus the transfer.
const fetchSlack = 30 * time.Second

// Fetch reads records of one partition as r says. It speaks the Fetch API
// through kafka-go's protocol package, whose answers carry what its Conn
// drops (the last stable offset, the aborted transactions, each batch's
// producer and attributes), over the client's transport, which routes to
// the partition's leader. A leader that moved or a topic created since the
// last metadata costs a refresh and a second try.
func (c *Client) Fetch(ctx context.Context, r FetchRequest) (FetchResult, error) {
	res, err := c.fetchOnce(ctx, r)
	if retryable(err) && ctx.Err() == nil {
		c.refresh()
		res, err = c.fetchOnce(ctx, r)
	}
	where := fmt.Sprintf("fetch %s[%d]@%d", r.Topic, r.Partition, r.Offset)
	switch {
	case err == nil:
		return res, nil
	case unknownTopic(err):
		// The transport says so too when it could not load the metadata
		// at all: ask for the topic's, which names the real cause.
		if _, merr := c.partitions(ctx, r.Topic); merr != nil && !errors.Is(merr, ErrTopicNotFound) {
			return FetchResult{}, fmt.Errorf("%s: %w", where, merr)
		}
		return FetchResult{}, fmt.Errorf("%s: %w", where, ErrTopicNotFound)
	case errors.Is(err, kafkago.OffsetOutOfRange):
		return FetchResult{}, fmt.Errorf("%s (high watermark %d): %w", where, res.HighWatermark, ErrOffsetOutOfRange)
	case ctx.Err() != nil:
		return FetchResult{}, fmt.Errorf("%s: %w", where, ctx.Err())
	default:
		return FetchResult{}, fmt.Errorf("%s: %w", where, c.auth.explain(err))
	}
}

// retryable: errors after which fresh metadata and a fresh connection may
// succeed.
func retryable(err error) bool {
	return unknownTopic(err) || errors.Is(err, kafkago.NotLeaderForPartition) ||
		errors.Is(err, kafkago.LeaderNotAvailable) || errors.Is(err, protocol.ErrNoLeader) ||
		errors.Is(err, kafkago.FencedLeaderEpoch) || errors.Is(err, kafkago.UnknownLeaderEpoch) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func (c *Client) fetchOnce(ctx context.Context, r FetchRequest) (FetchResult, error) {
	out, err := c.fetchMany(ctx, []FetchRequest{r}, r.MaxWait)
	if err != nil {
		return FetchResult{}, err
	}
	return out[0].res, out[0].err
}

// unknownTopic reports whether err says the topic or partition is unknown;
// kafka-go words that differently depending on where it found out.
func unknownTopic(err error) bool {
	return err != nil && (errors.Is(err, kafkago.UnknownTopicOrPartition) ||
		errors.Is(err, protocol.ErrNoTopic) || errors.Is(err, protocol.ErrNoPartition) ||
		strings.Contains(err.Error(), "topic not found") || strings.Contains(err.Error(), "unknown topic"))
}
