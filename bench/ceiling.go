package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"golang.org/x/sync/errgroup"
)

// readAll reads every message of topic's partitions up to ends with
// kafka-go's fastest path (a connection to each partition's leader and
// batch reads, 100 ms max wait) and nothing else: the ceiling the
// pipeline is compared with. It returns the time taken.
func readAll(ctx context.Context, brokers []string, topic string, ends map[int32]int64) (time.Duration, error) {
	start := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	for p, end := range ends {
		g.Go(func() error { return readPartition(ctx, brokers[0], topic, p, end) })
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func readPartition(ctx context.Context, broker, topic string, p int32, end int64) error {
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
		}
		if err := batch.Close(); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("ceiling: read %s[%d]@%d: %w", topic, p, next, err)
		}
	}
	return nil
}
