package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"golang.org/x/sync/errgroup"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

// readAll reads every message of topic's partitions up to ends with
// kafka-go's fastest path (a connection to each partition's leader and
// batch reads, 100 ms max wait) and nothing else: the ceiling the
// pipeline is compared with. It returns the time taken.
func readAll(ctx context.Context, brokers []string, topic string, ends domain.Offsets) (time.Duration, error) {
	return readAllWith(ctx, brokers, topic, ends, func(int32) (func([]byte) error, error) { return nil, nil })
}

// readAllWith is readAll calling, for each message, the function per
// partition makes for its partition (nil: none).
func readAllWith(ctx context.Context, brokers []string, topic string, ends domain.Offsets, per func(int32) (func([]byte) error, error)) (time.Duration, error) {
	start := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	for p, end := range ends {
		each, err := per(p.Partition)
		if err != nil {
			return 0, err
		}
		g.Go(func() error { return readPartition(ctx, brokers[0], topic, p.Partition, end, each) })
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func readPartition(ctx context.Context, broker, topic string, p int32, end int64, each func([]byte) error) error {
	conn, err := kafkago.DialLeader(ctx, "tcp", broker, topic, int(p))
	if err != nil {
		return fmt.Errorf("ceiling: dial %s[%d]: %w", topic, p, err)
	}
	defer conn.Close()
	if _, err := conn.Seek(0, kafkago.SeekAbsolute); err != nil {
		return fmt.Errorf("ceiling: seek %s[%d]: %w", topic, p, err)
	}
	next := int64(0)
	for next < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := conn.ReadBatchWith(kafkago.ReadBatchConfig{MinBytes: 1, MaxBytes: 4 << 20, MaxWait: 100 * time.Millisecond})
		for {
			m, err := batch.ReadMessage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				batch.Close()
				return fmt.Errorf("ceiling: read %s[%d]@%d: %w", topic, p, next, err)
			}
			next = m.Offset + 1
			if each != nil {
				if err := each(m.Value); err != nil {
					batch.Close()
					return fmt.Errorf("%s[%d]@%d: %w", topic, p, m.Offset, err)
				}
			}
		}
		if err := batch.Close(); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("ceiling: read %s[%d]@%d: %w", topic, p, next, err)
		}
	}
	return nil
}

// readAndParse is the ceiling read plus parsing every message with the
// pipeline's parser (the rollup-off spec), one parser per partition: the
// least any pipeline ingesting this JSON must do.
func readAndParse(ctx context.Context, brokers []string, topic string, ends domain.Offsets, spec domain.Spec) (time.Duration, error) {
	now := time.Now()
	return readAllWith(ctx, brokers, topic, ends, func(int32) (func([]byte) error, error) {
		p, err := parse.New(spec.DataSchema, spec.IOConfig)
		if err != nil {
			return nil, err
		}
		return func(v []byte) error { return p.Parse(v, now, func(domain.Row) {}) }, nil
	})
}
