package activities

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/pgstore"
	"handoff/internal/protocol"
	"handoff/internal/segment"
	"handoff/internal/storage"
)

// intervalWriter writes one segment at a time: merged rows arrive sorted by
// time, so each interval's rows are contiguous.
type intervalWriter struct {
	a      *Activities
	in     protocol.PublishInput
	name   string
	schema domain.Schema
	tmpDir string

	start time.Time
	endMs int64 // the current interval's end, Unix milliseconds
	file  *os.File
	w     *segment.Writer
	out   []pgstore.Segment
	rows  int64
	run   *running

	// ids, when the sequence goes to the datasource's Iceberg table, are
	// the table's field ids; files are each segment's table entry.
	ids   segment.FieldIDs
	files []lake.File
	// tableAwaited: the sequence goes without a table until `starter
	// table create` builds one (tableFieldIDs).
	tableAwaited bool
}

// writeSegments merges the staging files and writes one Parquet segment per
// interval; memory is bounded by the merge's fan-in, not by the sequence.
func (a *Activities) writeSegments(ctx context.Context, in protocol.PublishInput, name string, run *running) (*intervalWriter, error) {
	tmpDir, err := os.MkdirTemp(a.scratch(), ".publish-*")
	if err != nil {
		return nil, fmt.Errorf("sequence %s: %w", name, err)
	}
	defer os.RemoveAll(tmpDir)
	paths, err := a.localChunks(ctx, in.StagingKeys, tmpDir)
	if err != nil {
		return nil, fmt.Errorf("sequence %s: %w", name, err)
	}
	schema := in.Spec.DataSchema.DeclaredSchema()
	if len(paths) > 0 {
		if schema, err = segment.UnionSchema(paths); err != nil {
			return nil, fmt.Errorf("sequence %s: %w", name, err)
		}
	}
	iw := &intervalWriter{a: a, in: in, name: name, schema: schema, tmpDir: tmpDir, run: run}
	if iw.ids, iw.tableAwaited, err = a.tableFieldIDs(ctx, in, schema, run); err != nil {
		// Unwrapped: Temporal sees a non-retryable error only at the top.
		return nil, err
	}
	rollupOn := in.Spec.DataSchema.GranularitySpec.RollupOn()
	err = segment.Merge(ctx, paths, schema, rollupOn, mergeFanIn, tmpDir, func(r domain.Row) error {
		return iw.add(ctx, r)
	})
	if err == nil {
		err = iw.finish(ctx)
	}
	if err != nil {
		iw.abandon()
		return nil, fmt.Errorf("sequence %s: %w", name, err)
	}
	return iw, nil
}

func (iw *intervalWriter) add(ctx context.Context, r domain.Row) error {
	// Rows come sorted by time: only a row past the current interval's end
	// starts a new segment, so most rows skip the calendar arithmetic.
	if iw.w == nil || r.Time >= iw.endMs {
		gran := iw.in.Spec.DataSchema.GranularitySpec.SegmentGranularity
		start := gran.Truncate(time.UnixMilli(r.Time))
		if err := iw.finish(ctx); err != nil {
			return err
		}
		f, err := os.CreateTemp(iw.tmpDir, "segment-*.parquet")
		if err != nil {
			return err
		}
		w, err := segment.NewWriterWithFieldIDs(f, iw.schema, iw.ids)
		if err != nil {
			f.Close()
			return err
		}
		iw.start, iw.endMs, iw.file, iw.w = start, gran.Next(start).UnixMilli(), f, w
	}
	iw.rows++
	if iw.rows%65536 == 0 {
		iw.run.progress(nil, iw.rows, 0)
	}
	return iw.w.Write(r)
}

// finish closes the current interval's file and puts it in deep storage
// under its deterministic key, so a retry overwrites it.
func (iw *intervalWriter) finish(ctx context.Context) error {
	if iw.w == nil {
		return nil
	}
	w, f := iw.w, iw.file
	iw.w, iw.file = nil, nil
	ds := iw.in.Spec.DataSchema.DataSource
	end := iw.in.Spec.DataSchema.GranularitySpec.SegmentGranularity.Next(iw.start)
	interval := iw.start.Format(intervalFormat) + "_" + end.Format(intervalFormat)
	key := filepath.ToSlash(filepath.Join(ds, interval, iw.name+".parquet"))
	sf, err := iw.a.storeSegmentFile(ctx, w, f, key, iw.ids != nil)
	if err != nil {
		return err
	}
	iw.out = append(iw.out, pgstore.Segment{
		ID: ds + "_" + interval + "_" + iw.name, DataSource: ds, IntervalStart: iw.start, IntervalEnd: end,
		Version: iw.name, SequenceName: iw.name, Rows: sf.info.Rows, Bytes: sf.info.Bytes,
		URI: sf.uri, Checksum: sf.info.Checksum, QueryGranularity: iw.in.Spec.DataSchema.GranularitySpec.QueryGranularity,
	})
	if iw.ids != nil {
		iw.files = append(iw.files, lake.File{URI: sf.uri, Footer: sf.footer})
	}
	return nil
}

func (iw *intervalWriter) abandon() {
	if iw.file != nil {
		iw.file.Close()
		os.Remove(iw.file.Name())
	}
}

// putFile puts the whole of f, from its start, in s under key.
func putFile(ctx context.Context, s storage.Store, key string, f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return s.Put(ctx, key, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
}
