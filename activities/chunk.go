package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/parse"
	"handoff/internal/pgstore"
	"handoff/internal/protocol"
	"handoff/internal/rollup"
)

// chunk is the state of one Consume: what was read, parsed and set aside.
type chunk struct {
	a      *Activities
	in     protocol.ConsumeInput
	parser *parse.Parser
	buf    *rollup.Buffer
	to     domain.Offsets
	run    *running

	records, unparseable, thrownAway, bytesRead int64
	noValue, markers, aborted                   int64
	saved                                       []pgstore.ParseError // the latest unparseable rows, for parse_errors
	deadLetters                                 []kafka.Message
	rec                                         parse.Record // what the parser reads of a record, reused
	// rowPath keeps declared dimensions on the row path (Add) too: the
	// tests compare the two paths.
	rowPath bool
}

// full: the chunk holds as many rows or bytes as the spec allows in memory.
func (c *chunk) full() bool {
	t := c.in.Spec.TuningConfig
	return c.buf.Len() >= t.MaxRowsInMemory || c.buf.Bytes() >= t.MaxBytesInMemory
}

// add parses one record, read at now, into the buffer, or sets it aside as
// bad. A
// message over maxMessageBytes fails the chunk: holding it is what the
// limit is there to prevent.
func (c *chunk) add(p domain.Partition, r kafka.Record, now time.Time) error {
	spec := &c.in.Spec // not a copy: add runs per record
	if size := int64(len(r.Value) + len(r.Key)); size > spec.TuningConfig.MaxMessageBytes {
		msg := fmt.Sprintf("supervisor %s: the message at %s partition %d offset %d is %d bytes, more than tuningConfig.maxMessageBytes (%d); raise the limit (and the worker's memory) or keep such messages out of the topic",
			spec.ID, spec.IOConfig.TopicOf(p), p.Partition, r.Offset, size, spec.TuningConfig.MaxMessageBytes)
		return temporal.NewNonRetryableApplicationError(msg, domain.ErrMessageTooLarge, nil)
	}
	c.records++
	c.bytesRead += int64(len(r.Value) + len(r.Key))
	if len(r.Value) == 0 {
		// A null value (a tombstone: a key's deletion in a compacted
		// topic) or an empty one holds no row, and is not bad input.
		c.thrownAway++
		c.noValue++
		c.to[p] = r.Offset + 1
		return nil
	}
	if spec.IOConfig.TopicDimension != "" {
		c.parser.SetTopic(spec.IOConfig.TopicOf(p))
	}
	var addErr error
	c.rec = parse.Record{Topic: spec.IOConfig.TopicOf(p), Partition: p.Partition, Offset: r.Offset,
		Time: r.Time, Key: r.Key, Headers: r.Headers, Value: r.Value}
	var err error
	if c.parser.FixedDims() && !c.rowPath {
		// Declared dimensions: the buffer holds the chunk as columns,
		// copying from each row only its dictionaries' new values.
		err = c.parser.ParseRecordView(&c.rec, now, func(row *domain.Row) {
			if addErr == nil {
				addErr = c.buf.AddView(row)
			}
		})
	} else {
		err = c.parser.ParseRecord(&c.rec, now, func(row domain.Row) {
			if addErr == nil {
				addErr = c.buf.Add(row)
			}
		})
	}
	if addErr != nil {
		return fmt.Errorf("topic %s partition %d offset %d: %w", spec.IOConfig.TopicOf(p), p.Partition, r.Offset, addErr)
	}
	if err != nil {
		if err := c.setAside(p, r, err); err != nil {
			return err
		}
	}
	c.to[p] = r.Offset + 1
	if c.records%1024 == 0 {
		c.run.progress(c.to, int64(c.buf.Len()), c.buf.Bytes())
	}
	return nil
}

// setAside counts a record the parser rejected or could not parse, and
// keeps it for parse_errors and the dead-letter topic as the spec says;
// any other error stops the chunk and is returned. It is apart from add
// because errors.As's targets escape: declared in add, they cost two
// allocations a record, bad or not.
func (c *chunk) setAside(p domain.Partition, r kafka.Record, err error) error {
	var bad *parse.UnparseableError
	var rejected *parse.RejectedError
	switch {
	case errors.As(err, &rejected):
		c.thrownAway++
		if rejected.Reason != parse.ReasonFiltered {
			c.deadLetter(p, r, "rejected:"+rejected.Reason, err)
		}
	case errors.As(err, &bad):
		c.unparseable++
		c.keepParseError(p, r, err)
		c.deadLetter(p, r, "unparseable", err)
	case parse.IsUnavailable(err):
		return c.registryUnavailable(p, r, err)
	default:
		return err
	}
	return nil
}

// passed moves the chunk's end for p past what the fetch passed after its
// last record (transaction markers, aborted records), once every record
// of the fetch was added, and counts it.
func (c *chunk) passed(p domain.Partition, res kafka.FetchResult) {
	c.to[p] = max(c.to[p], res.Next)
	c.markers += int64(res.Markers)
	c.aborted += int64(res.Aborted)
}

func (c *chunk) keepParseError(p domain.Partition, r kafka.Record, err error) {
	spec := c.in.Spec
	if spec.TuningConfig.LogParseExceptions {
		c.run.log.Warn("unparseable message", "topic", spec.IOConfig.TopicOf(p), "partition", p.Partition, "offset", r.Offset, "error", err)
	}
	keep := spec.TuningConfig.MaxSavedParseExceptions
	if keep <= 0 {
		return
	}
	c.saved = append(c.saved, pgstore.ParseError{
		DataSource: spec.DataSchema.DataSource, Topic: spec.IOConfig.TopicOf(p),
		Partition: p.Partition, Offset: r.Offset, Error: err.Error(), Message: bytes.Clone(r.Value),
	})
	if len(c.saved) > keep {
		c.saved = c.saved[len(c.saved)-keep:]
	}
}

// deadLetterMaxBytes bounds a dead letter's value: Kafka refuses messages
// over 1 MiB by default, and a dead letter must not block the chunk.
const deadLetterMaxBytes = 1000 << 10

// deadLetter queues the message for the dead-letter topic, unchanged unless
// it is over deadLetterMaxBytes: then its value is cut there and headers
// say so (the source partition and offset still point at the whole).
func (c *chunk) deadLetter(p domain.Partition, r kafka.Record, reason string, err error) {
	if c.in.Spec.IOConfig.DeadLetterTopic == "" {
		return
	}
	// The record's bytes are the fetch's, reused once it is recycled.
	m := kafka.Message{Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value), Headers: map[string]string{
		"handoff.source.topic":     c.in.Spec.IOConfig.TopicOf(p),
		"handoff.source.partition": strconv.Itoa(int(p.Partition)),
		"handoff.source.offset":    strconv.FormatInt(r.Offset, 10),
		"handoff.reason":           reason,
		"handoff.error":            err.Error(),
		"handoff.supervisor":       c.in.Spec.ID,
	}}
	if len(m.Value) > deadLetterMaxBytes {
		m.Headers["handoff.truncated"] = "true"
		m.Headers["handoff.original.bytes"] = strconv.Itoa(len(m.Value))
		m.Value = m.Value[:deadLetterMaxBytes]
	}
	c.deadLetters = append(c.deadLetters, m)
}

// settleBadRows makes the bad rows durable before the offsets move past
// them: saved parse errors, dead letters. Then it enforces the group's
// parse-exception budget.
func (c *chunk) settleBadRows(ctx context.Context) error {
	spec := c.in.Spec
	if err := c.a.Store.SaveParseErrors(ctx, spec.ID, c.saved, spec.TuningConfig.MaxSavedParseExceptions); err != nil {
		return err
	}
	if len(c.deadLetters) > 0 {
		if err := c.a.Kafka.Produce(ctx, spec.IOConfig.DeadLetterTopic, c.deadLetters); err != nil {
			return fmt.Errorf("dead letters: %w", err)
		}
	}
	limit := spec.TuningConfig.MaxParseExceptions
	if total := c.in.ParseExceptions + c.unparseable; limit != nil && total > *limit {
		msg := fmt.Sprintf("supervisor %s group %d met %d unparseable rows, more than tuningConfig.maxParseExceptions (%d); the latest are in parse_errors (tuningConfig.maxSavedParseExceptions) — fix the input or raise the limit",
			spec.ID, c.in.Group, total, *limit)
		return temporal.NewNonRetryableApplicationError(msg, domain.ErrParseExceptionsExceeded, nil)
	}
	return nil
}

// registryUnavailable stops the chunk on a record whose schema the
// registry could not give: the record is not bad and must not be counted
// so. The retryable error, of a stable type, fails the attempt; Temporal
// retries it with back-off from the last staged chunk, so the record is
// read again, and the supervisor's watch reports the wait while it lasts
// (activities/watch_registry.go).
func (c *chunk) registryUnavailable(p domain.Partition, r kafka.Record, err error) error {
	spec := c.in.Spec
	if c.a.Metrics != nil {
		c.a.Metrics.SchemaRegistryFailed(spec.ID)
	}
	msg := fmt.Sprintf("supervisor %s: topic %s partition %d offset %d waits for the schema registry: %v",
		spec.ID, spec.IOConfig.TopicOf(p), p.Partition, r.Offset, err)
	return temporal.NewApplicationError(msg, domain.ErrSchemaRegistryUnavailable)
}
