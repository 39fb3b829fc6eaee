package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"handoff/internal/compact"
	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// CompactionPlan reads the datasource's compaction config in force and its
// used segments, and returns the intervals to compact this round
// (compact.Intervals): only the chosen tasks travel through the
// workflow's history, not the segment list.
func (a *Activities) CompactionPlan(ctx context.Context, in protocol.CompactionPlanInput) (protocol.CompactionPlanResult, error) {
	rec, ok, err := a.Store.CompactionConfig(ctx, in.DataSource)
	if err != nil || !ok {
		return protocol.CompactionPlanResult{}, err
	}
	cfg, err := domain.ParseCompactionConfig(rec.Config)
	if err != nil {
		return protocol.CompactionPlanResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("compaction config version %d of datasource %s: %v", rec.Version, in.DataSource, err), domain.ErrInvalidSpec, nil)
	}
	if cfg.QueryGranularity != "" {
		if err := a.checkRerollup(ctx, cfg, rec.Version); err != nil {
			return protocol.CompactionPlanResult{}, err
		}
	}
	used, err := a.Store.Segments(ctx, in.DataSource)
	if err != nil {
		return protocol.CompactionPlanResult{}, err
	}
	segs := make([]compact.Segment, len(used))
	for i, s := range used {
		segs[i] = compact.Segment{ID: s.ID, Start: s.IntervalStart, End: s.IntervalEnd, Rows: s.Rows, Bytes: s.Bytes, Grain: s.QueryGranularity}
	}
	skip := map[time.Time]bool{}
	for _, t := range in.Running {
		skip[t.UTC()] = true
	}
	p := compact.Intervals(segs, cfg, time.Now(), cfg.MaxConcurrentCompactions-len(in.Running), skip)
	res := protocol.CompactionPlanResult{HasConfig: true, Config: cfg, ConfigVersion: rec.Version, Pending: p.Pending, UsedSegments: len(used)}
	for _, t := range p.Tasks {
		res.Tasks = append(res.Tasks, protocol.CompactionTask{Start: t.Start, End: t.End, SegmentIDs: t.SegmentIDs, Rows: t.Rows, Bytes: t.Bytes})
	}
	return res, nil
}

// checkRerollup refuses, without retries, a re-rollup granularity that
// does not fit the datasource's latest spec (CheckGranularity).
func (a *Activities) checkRerollup(ctx context.Context, cfg domain.CompactionConfig, version int) error {
	spec, err := a.datasourceSpec(ctx, cfg.DataSource)
	if err != nil {
		return err
	}
	if err := cfg.CheckGranularity(spec.DataSchema.GranularitySpec); err != nil {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("compaction config version %d of datasource %s: %v", version, cfg.DataSource, err), domain.ErrInvalidSpec, nil)
	}
	return nil
}
