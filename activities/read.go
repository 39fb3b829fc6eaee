package activities

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"handoff/internal/domain"
	"handoff/internal/kafka"
)

// fetchMaxBytes bounds one fetch of one partition (Kafka consumers'
// max.partition.fetch.bytes default; a larger first batch still comes
// whole). A partition's answer shares its buffer with the others of its
// request until all are parsed: 1 MiB keeps the worker's peak memory below
// what 4 MiB answers per partition took, at no cost in throughput (bench
// backlog phase).
const fetchMaxBytes = 1 << 20

// batch is what one fetch of one partition returned.
type batch struct {
	partition domain.Partition
	res       kafka.FetchResult
}

// readChunk fetches every partition concurrently and parses what arrives,
// in order per partition, until the chunk period or the record budget is
// used up, the buffer is full, or every partition reached its end. A
// partition that has caught up stops early once anything was read, so a
// busy topic does not wait out the period. Records fetched but not parsed
// are left for the next chunk: the chunk's end offsets are what it parsed.
func (a *Activities) readChunk(ctx context.Context, c *chunk) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	deadline := time.Now().Add(c.in.Spec.TuningConfig.ChunkPeriod.D())
	batches := make(chan batch)
	g, gctx := errgroup.WithContext(ctx)
	var anyRead sync.Once
	gotData := make(chan struct{})
	for _, p := range c.in.From.Partitions() {
		g.Go(func() error {
			return a.fetchPartition(gctx, c, p, deadline, batches, gotData, &anyRead)
		})
	}
	go func() { _ = g.Wait(); close(batches) }()

	budget := int64(c.in.Spec.TuningConfig.MaxRecordsPerChunk)
	done := false
	for b := range batches {
		if done {
			continue // drain until the fetchers stop
		}
		now := time.Now() // the batch's read time, for late/early rejection
		added := 0
		for _, r := range b.res.Records {
			if err := c.add(b.partition, r, now); err != nil {
				cancel()
				done = true
				_ = g.Wait()
				return err
			}
			added++
			if c.records >= budget || c.full() {
				done = true
				break
			}
		}
		if added == len(b.res.Records) {
			c.passed(b.partition, b.res)
		}
		b.res.Recycle() // rows keep nothing of the records
		if done {
			cancel()
		}
	}
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// fetchPartition fetches one partition until its end, the deadline, or a
// cancel, sending each non-empty fetch to batches.
func (a *Activities) fetchPartition(ctx context.Context, c *chunk, p domain.Partition, deadline time.Time,
	batches chan<- batch, gotData chan struct{}, anyRead *sync.Once) error {
	offset := c.in.From[p]
	stop, bounded := c.in.Until[p]
	for {
		if bounded && offset >= stop {
			return nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil
		}
		res, err := a.Kafka.Fetch(ctx, kafka.FetchRequest{Topic: c.in.Spec.IOConfig.TopicOf(p), Partition: p.Partition, Offset: offset, Stop: stop,
			MaxBytes: fetchMaxBytes, MaxWait: min(wait, 250*time.Millisecond), Isolation: kafka.IsolationOf(c.in.Spec.IOConfig)})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			dctx, cancel := context.WithDeadline(ctx, deadline) // a gone topic waits out the chunk only
			defer cancel()
			return a.outOfRange(dctx, c.in, p, offset, err) // activities/outofrange.go; other errors unchanged
		}
		if res.Next == offset {
			res.Recycle()
		} else {
			if len(res.Records) > 0 {
				anyRead.Do(func() { close(gotData) })
			}
			offset = res.Next
			select {
			case batches <- batch{partition: p, res: res}:
			case <-ctx.Done():
				return nil
			}
			continue
		}
		select {
		case <-gotData:
			if offset >= res.Latest(kafka.IsolationOf(c.in.Spec.IOConfig)) {
				return nil // caught up, and the chunk has data: do not wait
			}
		default:
		}
	}
}
