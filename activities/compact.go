package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/compact"
	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/metrics"
	"handoff/internal/pgstore"
	"handoff/internal/protocol"
	"handoff/internal/segment"
	"handoff/internal/storage"
	"handoff/internal/workload"
)

// CompactInterval merges exactly the segments the task names (the bounded
// streaming merge of a publish: memory stays flat whatever the interval
// holds; with rollup on, rows of equal time and dimensions across segments
// combine; with the config's queryGranularity, times are first truncated
// to it, a re-rollup), writes segments of at most compact.RowsPerSegment rows under
// names derived from in.Name, and commits the swap of the used set in one
// transaction, with the Iceberg replace snapshot when the datasource has a
// table. It fails with ErrCompactionConflict, committing nothing, when a
// segment it read is no longer used. Every step is safe to repeat.
func (a *Activities) CompactInterval(ctx context.Context, in protocol.CompactIntervalInput) (res protocol.CompactIntervalResult, err error) {
	run, err := a.begin(ctx, workload.Work{Kind: workload.Compact, Supervisor: "compaction/" + in.DataSource, Sequence: in.Name})
	if err != nil {
		return res, err
	}
	defer func() { run.end(err) }()
	defer a.recordCompaction(in.DataSource, time.Now(), &res, &err)
	run.state(workload.StateMerging)
	segs, err := a.Store.UsedSegmentsByID(ctx, in.DataSource, in.Task.SegmentIDs)
	if err != nil {
		return res, err
	}
	if len(segs) != len(in.Task.SegmentIDs) {
		if done, err := a.Store.Replaced(ctx, in.DataSource, in.Name); err != nil || done {
			return protocol.CompactIntervalResult{AlreadyDone: done}, err
		}
		return res, conflict(in, fmt.Errorf("%d of its %d segments are no longer used", len(in.Task.SegmentIDs)-len(segs), len(in.Task.SegmentIDs)))
	}
	spec, err := a.datasourceSpec(ctx, in.DataSource)
	if err != nil {
		return res, err
	}
	if err := in.Config.CheckGranularity(spec.DataSchema.GranularitySpec); err != nil {
		return res, temporal.NewNonRetryableApplicationError("compaction "+in.Name+": "+err.Error(), domain.ErrInvalidSpec, nil)
	}
	tmpDir, err := os.MkdirTemp(a.scratch(), ".compact-*")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmpDir)
	cw, err := a.compactSegments(ctx, in, spec, segs, tmpDir, run)
	if err != nil {
		return res, err
	}
	run.state(workload.StateCommitting)
	rep := pgstore.Replacement{DataSource: in.DataSource, Name: in.Name, New: cw.out}
	for _, s := range segs {
		rep.Replaced = append(rep.Replaced, s.ID)
		res.RowsIn, res.BytesIn = res.RowsIn+s.Rows, res.BytesIn+s.Bytes
	}
	switch {
	case cw.ids != nil:
		rep.Table = a.tableReplace(in, segs, cw.files)
	case cw.tableAwaited:
		rep.Table = func(ctx context.Context, tx pgx.Tx) error { return a.Tables.NoTableInTx(ctx, tx, in.DataSource) }
	}
	if f := a.Faults.BeforeCompactionCommit; f != nil {
		if err := f(in.Name); err != nil {
			return res, err
		}
	}
	already, err := a.Store.Replace(ctx, rep)
	switch {
	case errors.Is(err, pgstore.ErrReplacedChanged), errors.Is(err, lake.ErrNotInTable):
		return res, conflict(in, err)
	case err != nil:
		return res, err
	}
	if f := a.Faults.AfterCompactionCommit; f != nil {
		if err := f(in.Name); err != nil {
			return res, err
		}
	}
	res.SegmentsIn, res.SegmentsOut, res.AlreadyDone = len(segs), len(cw.out), already
	for _, s := range cw.out {
		res.RowsOut, res.BytesOut = res.RowsOut+s.Rows, res.BytesOut+s.Bytes
	}
	if cw.ids != nil && !already {
		a.maintainTable(ctx, run.log, in.DataSource)
	}
	return res, nil
}

// recordCompaction puts what a CompactInterval did in the metrics.
func (a *Activities) recordCompaction(ds string, start time.Time, res *protocol.CompactIntervalResult, err *error) {
	if a.Metrics == nil {
		return
	}
	c := metrics.Compaction{Result: metrics.CompactionDone, Duration: time.Since(start),
		RowsIn: res.RowsIn, RowsOut: res.RowsOut, SegmentsIn: int64(res.SegmentsIn), SegmentsOut: int64(res.SegmentsOut),
		BytesIn: res.BytesIn, BytesOut: res.BytesOut}
	var appErr *temporal.ApplicationError
	switch {
	case *err == nil:
	case errors.As(*err, &appErr) && appErr.Type() == domain.ErrCompactionConflict:
		c.Result = metrics.CompactionConflict
	default:
		c.Result = metrics.CompactionFailed
	}
	a.Metrics.Compacted(ds, c)
}

func conflict(in protocol.CompactIntervalInput, err error) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("compaction %s of %s/%s: %v",
		in.Name, in.Task.Start.Format(intervalFormat), in.Task.End.Format(intervalFormat), err), domain.ErrCompactionConflict, nil)
}

const intervalFormat = "20060102T150405Z"

// datasourceSpec is the spec most recently accepted for the datasource:
// its rollup and segment granularity are what compaction keeps.
func (a *Activities) datasourceSpec(ctx context.Context, ds string) (domain.Spec, error) {
	b, ok, err := a.Store.LatestSpecOf(ctx, ds)
	if err != nil {
		return domain.Spec{}, err
	}
	if !ok {
		return domain.Spec{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("datasource %s: no supervisor spec writes into it, so its rollup and granularity are unknown", ds), domain.ErrInvalidSpec, nil)
	}
	spec, err := domain.ParseSpec(b)
	if err != nil {
		return domain.Spec{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("datasource %s: its latest spec: %v", ds, err), domain.ErrInvalidSpec, nil)
	}
	return spec, nil
}

// tableReplace is the table half of a compaction: the files read leave
// the table and the files written come in, in one snapshot.
func (a *Activities) tableReplace(in protocol.CompactIntervalInput, read []pgstore.Segment, files []lake.File) func(context.Context, pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		r := lake.Replace{DataSource: in.DataSource, Name: in.Name, Files: files}
		for _, s := range read {
			r.Removed = append(r.Removed, s.URI)
		}
		_, err := a.Tables.ReplaceInTx(ctx, tx, r)
		return err
	}
}

// paceRows: a compaction lets its pacer pause it after every so many rows
// (a few milliseconds of work).
const paceRows = 4096

// compactWriter writes the merged rows of one interval as segments of at
// most rowsPer rows each.
type compactWriter struct {
	a       *Activities
	in      protocol.CompactIntervalInput
	schema  domain.Schema
	tmpDir  string
	rowsPer int64
	run     *running
	grain   domain.Granularity // the rows' query granularity (compact.Grain)
	pacer   *workload.Pacer    // yields the worker's cores to ingestion

	cur   *os.File
	w     *segment.Writer
	rows  int64 // in the current file
	total int64
	out   []pgstore.Segment

	ids          segment.FieldIDs
	files        []lake.File
	tableAwaited bool
}

func (a *Activities) compactSegments(ctx context.Context, in protocol.CompactIntervalInput, spec domain.Spec, segs []pgstore.Segment, tmpDir string, run *running) (*compactWriter, error) {
	paths := make([]string, len(segs))
	for i, s := range segs {
		key, err := storage.KeyOf(a.Deep, s.URI)
		if err != nil {
			return nil, err
		}
		paths[i] = filepath.Join(tmpDir, "in-"+strconv.Itoa(i)+".parquet")
		if err := fetch(ctx, a.Deep, key, paths[i]); err != nil {
			return nil, fmt.Errorf("fetch segment %s: %w", s.URI, err)
		}
	}
	schema, err := segment.UnionSchema(paths)
	if err != nil {
		return nil, fmt.Errorf("compaction %s: %w", in.Name, err)
	}
	task := compact.Task{Rows: in.Task.Rows, Bytes: in.Task.Bytes}
	cw := &compactWriter{a: a, in: in, schema: schema, tmpDir: tmpDir, rowsPer: compact.RowsPerSegment(task, in.Config), run: run,
		pacer: a.Tracker.Pacer()}
	if a.Tables != nil && spec.IOConfig.TableOn() {
		cw.ids, err = a.Tables.Ensure(ctx, in.DataSource, schema, spec.DataSchema.GranularitySpec.SegmentGranularity)
		var schemaErr *lake.SchemaError
		switch {
		case errors.Is(err, lake.ErrNotCreated):
			cw.tableAwaited = true
		case errors.As(err, &schemaErr):
			return nil, temporal.NewNonRetryableApplicationError("compaction "+in.Name+": "+err.Error(), domain.ErrTableSchema, nil)
		case err != nil:
			return nil, fmt.Errorf("compaction %s: %w", in.Name, err)
		}
	}
	grains := make([]domain.Granularity, len(segs))
	for i, s := range segs {
		grains[i] = s.QueryGranularity
	}
	cw.grain = compact.Grain(grains, in.Config)
	err = segment.MergeRegrained(ctx, paths, schema, spec.DataSchema.GranularitySpec.RollupOn(), in.Config.QueryGranularity, mergeFanIn, tmpDir, func(r domain.Row) error {
		return cw.add(ctx, r)
	})
	if err == nil {
		err = cw.finish(ctx)
	}
	if err != nil {
		if cw.cur != nil {
			cw.cur.Close()
		}
		return nil, fmt.Errorf("compaction %s: %w", in.Name, err)
	}
	return cw, nil
}

func (cw *compactWriter) add(ctx context.Context, r domain.Row) error {
	if cw.w != nil && cw.rows >= cw.rowsPer {
		if err := cw.finish(ctx); err != nil {
			return err
		}
	}
	if cw.w == nil {
		f, err := os.CreateTemp(cw.tmpDir, "out-*.parquet")
		if err != nil {
			return err
		}
		w, err := segment.NewWriterWithFieldIDs(f, cw.schema, cw.ids)
		if err != nil {
			f.Close()
			return err
		}
		cw.cur, cw.w, cw.rows = f, w, 0
	}
	cw.rows++
	cw.total++
	if cw.total%paceRows == 0 {
		if err := cw.pacer.Step(ctx); err != nil {
			return err
		}
	}
	if cw.total%65536 == 0 {
		cw.run.progress(nil, cw.total, 0)
	}
	return cw.w.Write(r)
}

// finish closes the current file and puts it in deep storage under its
// deterministic key: a retry overwrites it.
func (cw *compactWriter) finish(ctx context.Context) error {
	if cw.w == nil {
		return nil
	}
	w, f := cw.w, cw.cur
	cw.w, cw.cur = nil, nil
	ds, t := cw.in.DataSource, cw.in.Task
	interval := t.Start.UTC().Format(intervalFormat) + "_" + t.End.UTC().Format(intervalFormat)
	n := strconv.Itoa(len(cw.out))
	key := ds + "/" + interval + "/" + cw.in.Name + "-" + n + ".parquet"
	sf, err := cw.a.storeSegmentFile(ctx, w, f, key, cw.ids != nil)
	if err != nil {
		return err
	}
	cw.out = append(cw.out, pgstore.Segment{
		ID: ds + "_" + interval + "_" + cw.in.Name + "_" + n, DataSource: ds, IntervalStart: t.Start, IntervalEnd: t.End,
		Version: cw.in.Name, SequenceName: cw.in.Name, Rows: sf.info.Rows, Bytes: sf.info.Bytes, URI: sf.uri, Checksum: sf.info.Checksum,
		QueryGranularity: cw.grain,
	})
	if cw.ids != nil {
		cw.files = append(cw.files, lake.File{URI: sf.uri, Footer: sf.footer})
	}
	return nil
}
