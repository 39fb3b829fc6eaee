package activities

import (
	"context"
	"fmt"
	"handoff/internal/protocol"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"golang.org/x/sync/errgroup"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/parse"
	"handoff/internal/segment"
)

// fetchMaxBytes bounds one fetch of one partition.
const fetchMaxBytes = 4 << 20

// Consume reads one chunk, parses it, and writes its rows to a staging file
// before returning, so that what the result reports is durable.
func (a *Activities) Consume(ctx context.Context, in protocol.ConsumeInput) (protocol.ConsumeResult, error) {
	start := time.Now()
	records, to, err := a.read(ctx, in)
	if err != nil {
		return protocol.ConsumeResult{}, classify(err)
	}
	res := protocol.ConsumeResult{To: to}
	parser := parse.New(in.Spec.DataSchema)
	var rows []domain.Row
	for p, recs := range records {
		for _, r := range recs {
			res.Records++
			row, err := parser.Parse(r.Value)
			if err != nil {
				res.Unparseable++
				a.Log.Warn("unparseable message", "supervisor", in.Spec.ID, "topic", in.Spec.IOConfig.Topic,
					"partition", p, "offset", r.Offset, "error", err)
				continue
			}
			rows = append(rows, row)
		}
	}
	if len(rows) > 0 {
		res.StagingKey = stagingKey(in.Spec.ID, in.SequenceName, in.From)
		var info segment.Info
		err := a.Staging.Put(ctx, res.StagingKey, func(w io.Writer) error {
			var err error
			info, err = segment.Write(w, in.Spec.DataSchema.DimensionsSpec.Dimensions, rows)
			return err
		})
		if err != nil {
			return protocol.ConsumeResult{}, fmt.Errorf("write staging file %s: %w", res.StagingKey, err)
		}
		res.Rows, res.Bytes = info.Rows, info.Bytes
	}
	activity.RecordHeartbeat(ctx, res.To)
	a.Log.Debug("consumed chunk", "sequence", in.SequenceName, "from", in.From.String(), "to", to.String(),
		"records", res.Records, "rows", res.Rows, "took", time.Since(start))
	return res, nil
}

// stagingKey is deterministic in the chunk's start, so a retried consume of
// the same chunk replaces its file instead of adding one.
func stagingKey(supervisorID, sequenceName string, from domain.Offsets) string {
	parts := make([]string, 0, len(from))
	for _, p := range from.Partitions() {
		parts = append(parts, fmt.Sprintf("p%d-%d", p, from[p]))
	}
	return fmt.Sprintf("%s/%s/%s.parquet", supervisorID, sequenceName, strings.Join(parts, "_"))
}

// read fetches every partition concurrently until the record budget or the
// chunk period is used up, or every partition reached its end. A partition
// that has caught up stops early once anything was read, so a busy topic
// does not wait out the period.
func (a *Activities) read(ctx context.Context, in protocol.ConsumeInput) (map[int32][]kafka.Record, domain.Offsets, error) {
	deadline := time.Now().Add(in.Spec.TuningConfig.ChunkPeriod.D())
	budget := int64(in.Spec.TuningConfig.MaxRecordsPerChunk)
	var total atomic.Int64
	var mu sync.Mutex
	records := map[int32][]kafka.Record{}
	to := in.From.Clone()
	g, gctx := errgroup.WithContext(ctx)
	for _, p := range in.From.Partitions() {
		g.Go(func() error {
			recs, next, err := a.readPartition(gctx, in, p, deadline, budget, &total)
			mu.Lock()
			defer mu.Unlock()
			records[p], to[p] = recs, next
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return records, to, nil
}

func (a *Activities) readPartition(ctx context.Context, in protocol.ConsumeInput, p int32, deadline time.Time, budget int64, total *atomic.Int64) ([]kafka.Record, int64, error) {
	offset := in.From[p]
	stop, bounded := in.Until[p]
	var out []kafka.Record
	for {
		if bounded && offset >= stop {
			return out, offset, nil
		}
		wait := time.Until(deadline)
		if wait <= 0 || total.Load() >= budget {
			return out, offset, nil
		}
		res, err := a.Kafka.Fetch(ctx, in.Spec.IOConfig.Topic, p, offset, stop, fetchMaxBytes, min(wait, 250*time.Millisecond))
		if err != nil {
			return nil, 0, err
		}
		if n := int64(len(res.Records)); n > 0 {
			if room := budget - total.Add(n) + n; room < n {
				res.Records = res.Records[:max(room, 0)]
			}
		}
		if len(res.Records) > 0 {
			out = append(out, res.Records...)
			offset = res.Records[len(res.Records)-1].Offset + 1
		}
		caughtUp := len(res.Records) == 0 && offset >= res.HighWatermark
		if caughtUp && total.Load() > 0 {
			return out, offset, nil
		}
	}
}
