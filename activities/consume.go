package activities

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/parse"
	"handoff/internal/protocol"
	"handoff/internal/rollup"
	"handoff/internal/segment"
	"handoff/internal/workload"
)

// Consume reads one chunk, parses and (with rollup) aggregates it, and
// writes its rows to a staging file before returning, so that what the
// result reports is durable. Unparseable rows are counted, saved to
// parse_errors (up to maxSavedParseExceptions) and, like rejected rows,
// sent to the dead-letter topic before the result moves the offsets past
// them. The chunk ends early when its rows reach maxRowsInMemory or
// maxBytesInMemory.
func (a *Activities) Consume(ctx context.Context, in protocol.ConsumeInput) (res protocol.ConsumeResult, err error) {
	start := time.Now()
	parser, err := parse.New(in.Spec.DataSchema, in.Spec.IOConfig)
	if err != nil {
		return protocol.ConsumeResult{}, temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrInvalidSpec, nil)
	}
	run, err := a.begin(ctx, workload.Work{
		Kind: workload.Consume, Supervisor: in.Spec.ID, Group: in.Group,
		Partitions: in.From.Partitions(), Sequence: in.SequenceName, Offsets: in.From,
	})
	if err != nil {
		return protocol.ConsumeResult{}, err
	}
	defer func() { run.end(err) }()
	run.state(workload.StateReading)
	c := &chunk{
		a: a, in: in, parser: parser, to: in.From.Clone(), run: run,
		buf: rollup.New(in.Spec.DataSchema.MetricsSpec, in.Spec.DataSchema.GranularitySpec.RollupOn()),
	}
	if err := a.readChunk(ctx, c); err != nil {
		return protocol.ConsumeResult{}, classify(err)
	}
	if err := c.settleBadRows(ctx); err != nil {
		return protocol.ConsumeResult{}, err
	}
	res = protocol.ConsumeResult{To: c.to, Records: c.records, Unparseable: c.unparseable, ThrownAway: c.thrownAway,
		NoValue: c.noValue, Markers: c.markers, Aborted: c.aborted}
	run.state(workload.StateWritingChunk)
	if c.buf.Len() > 0 {
		s := c.stage() // chunk_stage.go
		res.StagingKey = stagingKey(in.Spec.ID, in.SequenceName, in.From)
		var info segment.Info
		err := a.Staging.Put(ctx, res.StagingKey, func(w io.Writer) (err error) {
			info, err = s.write(w)
			return err
		})
		s.release()
		if err != nil {
			return protocol.ConsumeResult{}, fmt.Errorf("write staging file %s: %w", res.StagingKey, err)
		}
		res.Rows, res.Bytes = info.Rows, info.Bytes
	}
	if a.Metrics != nil {
		a.Metrics.Consumed(in.Spec.ID, c.records, c.unparseable, c.thrownAway, c.bytesRead, time.Since(start))
	}
	run.log.Debug("consumed chunk", "from", in.From.String(), "to", res.To.String(),
		"records", res.Records, "rows", res.Rows, "took", time.Since(start))
	return res, nil
}

// stagingKey is deterministic in the chunk's start, so a retried consume of
// the same chunk replaces its file instead of adding one.
func stagingKey(supervisorID, sequenceName string, from domain.Offsets) string {
	return stagingDir(supervisorID, sequenceName) + offsetsName(from) + ".run"
}

// offsetsName renders offsets for a file name: "p0-1200_p2-880". Offsets
// of a topicPattern's partitions, whose topic names would make it long
// past what a file name may be, become "o" and a hash of that rendering
// (FNV-64a), as deterministic.
func offsetsName(from domain.Offsets) string {
	parts := make([]string, 0, len(from))
	named := false
	for _, p := range from.Partitions() {
		parts = append(parts, fmt.Sprintf("%s-%d", p.Label(), from[p]))
		named = named || p.Topic != ""
	}
	name := strings.Join(parts, "_")
	if named {
		h := fnv.New64a()
		h.Write([]byte(name))
		return fmt.Sprintf("o%016x", h.Sum64())
	}
	return name
}

// stagingDir holds every chunk of one sequence.
func stagingDir(supervisorID, sequenceName string) string {
	return supervisorID + "/" + sequenceName + "/"
}
