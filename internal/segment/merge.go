package segment

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// Merge streams the rows of files, each sorted by domain.CompareRows, as one
// sorted stream in schema into, calling emit for each row. into's
// dimensions must include every file's (UnionSchema gives them): a file's
// dimensions are mapped onto into's by name, and those it lacks are null.
// Its metrics must be every file's. With rollup, rows with the same time
// and dimensions are combined into one with aggregate.Combine. Without it,
// all rows come out, equal rows in the order of paths. A row is emit's only
// during the call: its cells are reused after it returns, so an emit that
// keeps a row copies it.
//
// At most maxOpen (≥ 2) files are open at once. With more, Merge first
// merges groups of them into temporary files in tmpDir ("" for the system
// default), pass after pass, and removes those files as soon as they are
// merged and before it returns. Memory is bounded by the open files' batches and pages, not by
// the number of rows. A file found out of order is an error, except that a
// file whose dimensions are in another order than into's (so its rows are
// sorted differently) is first re-sorted into temporary runs.
func Merge(ctx context.Context, paths []string, into domain.Schema, rollup bool, maxOpen int, tmpDir string, emit func(domain.Row) error) error {
	return MergeRegrained(ctx, paths, into, rollup, domain.GranularityNone, maxOpen, tmpDir, emit)
}

// MergeRegrained is Merge with every row's time first truncated to grain
// (a re-rollup: with rollup, rows whose truncated times and dimensions
// are equal combine). Truncation breaks the files' order, so with a grain
// other than none every file is re-sorted into temporary runs first, in
// bounded memory.
func MergeRegrained(ctx context.Context, paths []string, into domain.Schema, rollup bool, grain domain.Granularity, maxOpen int, tmpDir string, emit func(domain.Row) error) error {
	if maxOpen < 2 {
		return fmt.Errorf("merge segments: maxOpen is %d, want at least 2", maxOpen)
	}
	if err := checkSchema(into); err != nil {
		return fmt.Errorf("merge segments: %w", err)
	}
	if grain == "" {
		grain = domain.GranularityNone
	}
	m := &merger{into: into, rollup: rollup, grain: grain, maxOpen: maxOpen, tmpDir: tmpDir, temps: map[string]bool{}}
	defer m.removeTemps()
	paths, err := m.sortIfNeeded(ctx, paths)
	if err != nil {
		return err
	}
	for len(paths) > maxOpen {
		if paths, err = m.pass(ctx, paths); err != nil {
			return err
		}
	}
	return m.merge(ctx, paths, emit)
}

type merger struct {
	into    domain.Schema
	rollup  bool
	grain   domain.Granularity // rows' times are truncated to it (none: kept)
	maxOpen int
	tmpDir  string
	temps   map[string]bool // temporary files not yet removed
}

// pass merges groups of paths into temporary files and returns the files
// for the next pass, which are fewer.
func (m *merger) pass(ctx context.Context, paths []string) ([]string, error) {
	var next []string
	for _, group := range passGroups(paths, m.maxOpen) {
		if len(group) == 1 {
			next = append(next, group[0])
			continue
		}
		tmp, err := m.mergeToTemp(ctx, group)
		if err != nil {
			return nil, err
		}
		next = append(next, tmp)
		for _, p := range group {
			if m.temps[p] {
				m.remove(p)
			}
		}
	}
	return next, nil
}

// passGroups splits paths into groups of at most maxOpen. When one merge
// of the first few files brings the count down to maxOpen, only those are
// merged, so no more rows than needed are written twice.
func passGroups(paths []string, maxOpen int) [][]string {
	var groups [][]string
	if need := len(paths) - maxOpen + 1; need <= maxOpen {
		groups = append(groups, paths[:need])
		for _, p := range paths[need:] {
			groups = append(groups, []string{p})
		}
		return groups
	}
	for i := 0; i < len(paths); i += maxOpen {
		groups = append(groups, paths[i:min(i+maxOpen, len(paths))])
	}
	return groups
}

func (m *merger) mergeToTemp(ctx context.Context, group []string) (string, error) {
	return m.toTemp(func(emit func(domain.Row) error) error {
		return m.merge(ctx, group, emit)
	})
}

// toTemp writes the rows fill emits to a new temporary file in into's schema.
func (m *merger) toTemp(fill func(emit func(domain.Row) error) error) (_ string, err error) {
	f, err := os.CreateTemp(m.tmpDir, "segment-merge-*.run")
	if err != nil {
		return "", fmt.Errorf("merge segments: %w", err)
	}
	tmp := f.Name()
	m.temps[tmp] = true
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("merge segments into %s: %w", tmp, cerr)
		}
	}()
	// Nothing outlives the merge, so no fsync.
	bw := bufio.NewWriterSize(f, 256<<10)
	w, err := NewRunWriter(bw, m.into)
	if err != nil {
		return "", err
	}
	if err := fill(func(r domain.Row) error { return w.Write(r) }); err != nil {
		return "", err
	}
	if _, err := w.Close(); err != nil {
		return "", fmt.Errorf("merge segments into %s: %w", tmp, err)
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("merge segments into %s: %w", tmp, err)
	}
	return tmp, nil
}

func (m *merger) remove(path string) {
	// A leftover in tmpDir is harmless, and the merge result does not
	// depend on it, so a failed removal is not the merge's error.
	_ = os.Remove(path)
	delete(m.temps, path)
}

func (m *merger) removeTemps() {
	for p := range m.temps {
		m.remove(p)
	}
}

// ctxCheckRows is how often, in rows, a merge looks at its context.
const ctxCheckRows = 4096

// merge streams the rows of at most maxOpen paths, in order, to emit.
func (m *merger) merge(ctx context.Context, paths []string, emit func(domain.Row) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	h := &cursorHeap{dims: m.into.Dims}
	defer func() {
		for _, c := range h.cursors {
			err = errors.Join(err, c.r.Close())
		}
	}()
	for i, p := range paths {
		r, err := open(p, &m.into)
		if err != nil {
			return fmt.Errorf("open segment %s: %w", p, err)
		}
		if r.run != nil {
			// The merge holds a cursor's row and the one before it, and
			// emit and the roller keep none: the cells can be reused.
			r.ring = &cellRing{}
		}
		c := &cursor{r: r, index: i}
		ok, err := c.advance(m.into.Dims)
		if err != nil || !ok {
			if err := errors.Join(err, r.Close()); err != nil {
				return err
			}
			continue // an empty file
		}
		h.cursors = append(h.cursors, c)
	}
	h.init()
	out := emit
	var roll *roller
	if m.rollup {
		roll = &roller{into: m.into, emit: emit}
		out = roll.add
	}
	for n := 1; len(h.cursors) > 0; n++ {
		if n%ctxCheckRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := h.cursors[0]
		row := c.row
		ok, err := c.advance(m.into.Dims)
		if err != nil {
			return err
		}
		if ok {
			h.fix()
		} else {
			h.pop()
			if err := c.r.Close(); err != nil {
				return fmt.Errorf("close segment %s: %w", c.r.path, err)
			}
		}
		if err := out(row); err != nil {
			return err
		}
	}
	if roll != nil {
		return roll.flush()
	}
	return nil
}

// roller rolls up a sorted stream: it holds back each row until the next
// one differs in time or dimensions, combining the metrics of equal ones.
// pending is a copy in one of two buffers of its own, taken in turn: the
// reader reuses the cells of the rows it hands out, and the previous
// pending row's buffer is emit's until emit returns.
type roller struct {
	into    domain.Schema
	emit    func(domain.Row) error
	pending domain.Row
	have    bool
	bufs    [2][]domain.Value
	flip    int
}

func (r *roller) add(row domain.Row) error {
	if !r.have {
		r.pending, r.have = r.own(row), true
		return nil
	}
	if domain.CompareRows(r.pending, row, r.into.Dims) != 0 {
		prev := r.pending
		r.pending = r.own(row)
		return r.emit(prev)
	}
	// pending's metrics are combined in place: no one has seen it yet.
	for i, spec := range r.into.Metrics {
		v, err := aggregate.Combine(spec, r.pending.Metrics[i], row.Metrics[i])
		if err != nil {
			return fmt.Errorf("roll up metric %q: %w", spec.Name, err)
		}
		r.pending.Metrics[i] = v
	}
	return nil
}

func (r *roller) flush() error {
	if !r.have {
		return nil
	}
	r.have = false
	return r.emit(r.pending)
}

// own copies row's cells into the roller's next buffer.
func (r *roller) own(row domain.Row) domain.Row {
	r.flip ^= 1
	nd := len(row.Dims)
	buf := append(append(r.bufs[r.flip][:0], row.Dims...), row.Metrics...)
	r.bufs[r.flip] = buf
	out := domain.Row{Time: row.Time, Dims: row.Dims[:0:0], Metrics: row.Metrics[:0:0]}
	if nd > 0 {
		out.Dims = buf[:nd:nd]
	}
	if len(row.Metrics) > 0 {
		out.Metrics = buf[nd:len(buf):len(buf)]
	}
	return out
}
