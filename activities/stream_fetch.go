package activities

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/errgroup"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/protocol"
	"handoff/internal/rollup"
	"handoff/internal/segment"
)

// How long one fetch waits for records: fetchWait, doubled after each
// fetch that found none up to fetchWaitIdle. The broker answers as soon as
// a record arrives, so the wait costs no latency; it sets how often a quiet
// partition is asked (4 times a second at first, once every 4 s when
// idle). Every partition a worker reads is asked in the same request as
// the others on its broker (kafka.Client.Follow). A stream asked to return
// does not wait for a fetch in flight.
const (
	fetchWait     = 250 * time.Millisecond
	fetchWaitIdle = 4 * time.Second
)

// fetchAll fetches every partition of the stream from its staged position
// until ctx ends or the partition reaches Until, sending each non-empty
// fetch to the returned channel, which closes once every fetcher ended;
// wait returns the first fetch error.
func (s *stream) fetchAll(ctx context.Context) (<-chan batch, func() error) {
	out := make(chan batch)
	g, gctx := errgroup.WithContext(ctx)
	for _, p := range s.res.To.Partitions() {
		from := s.res.To[p]
		g.Go(func() error { return s.fetchPartition(gctx, p, from, out) })
	}
	done := make(chan error, 1)
	go func() { done <- g.Wait(); close(out) }()
	var err error
	waited := false
	return out, func() error {
		if !waited {
			err, waited = <-done, true
		}
		return err
	}
}

// fetchPartition reads one partition from offset, at the spec's isolation
// level, sending on every fetch that read records or passed markers or
// aborted records (whose end the chunk must take). Fetches that moved
// nothing only tell the partition's ends (saw).
func (s *stream) fetchPartition(ctx context.Context, p domain.Partition, offset int64, out chan<- batch) error {
	stop, bounded := s.in.Until[p]
	if bounded && offset >= stop {
		return nil
	}
	iso := kafka.IsolationOf(s.in.Spec.IOConfig)
	feed := s.a.Kafka.Follow(kafka.FetchRequest{Topic: s.in.Spec.IOConfig.TopicOf(p), Partition: p.Partition, Offset: offset, Stop: stop,
		MaxBytes: fetchMaxBytes, MaxWait: fetchWait, IdleWait: fetchWaitIdle, Isolation: iso})
	defer feed.Close()
	for {
		res, err := feed.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			in := protocol.ConsumeInput{Spec: s.in.Spec, Group: s.in.Group, SequenceName: s.in.SequenceName}
			return s.a.outOfRange(ctx, in, p, offset, err) // other errors unchanged
		}
		s.saw(p, res, iso)
		if res.Next == offset {
			res.Recycle()
			if bounded && offset >= stop {
				return nil
			}
			continue
		}
		offset = res.Next
		select {
		case out <- batch{partition: p, res: res}:
		case <-ctx.Done():
			res.Recycle()
			return nil
		}
		if bounded && offset >= stop {
			return nil
		}
	}
}

// writeChunk writes a chunk's rows to its staging file.
func (a *Activities) writeChunk(ctx context.Context, c *chunk, key string) (segment.Info, error) {
	rows := c.buf.Rows(c.parser.Schema().Dims)
	defer rollup.Recycle(rows)
	var info segment.Info
	err := a.Staging.Put(ctx, key, func(w io.Writer) (err error) {
		info, err = segment.WriteRun(w, c.parser.Schema(), rows)
		return err
	})
	if err != nil {
		return segment.Info{}, fmt.Errorf("write staging file %s: %w", key, err)
	}
	return info, nil
}
