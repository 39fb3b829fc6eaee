package segment

import (
	"context"
	"fmt"
	"slices"
	"time"

	"handoff/internal/domain"
)

// sortRunRows bounds the rows a re-sort holds in memory at once.
const sortRunRows = 64 << 10

// sortIfNeeded returns paths with each file whose rows are not in into's
// order (every file, when the merge truncates times) replaced by sorted
// runs. A file is in into's order when its
// dimensions appear in into in the same relative order: the dimensions it
// lacks are null in all its rows, so they never reorder them. Files of
// discovered dimensions can disagree: one saw "a" first, another "b".
func (m *merger) sortIfNeeded(ctx context.Context, paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		s, err := ReadSchema(p)
		if err != nil {
			return nil, err
		}
		pos, _, err := mapDims(s, &m.into)
		if err != nil {
			return nil, fmt.Errorf("merge segment %s: %w", p, err)
		}
		if m.grain == domain.GranularityNone && slices.IsSorted(pos) {
			out = append(out, p)
			continue
		}
		runs, err := m.sortRuns(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, runs...)
	}
	return out, nil
}

// sortRuns re-sorts a file, sortRunRows rows at a time, into temporary
// files in into's layout and order, with each row's time truncated to the
// merge's grain.
func (m *merger) sortRuns(ctx context.Context, path string) (_ []string, err error) {
	r, err := open(path, &m.into)
	if err != nil {
		return nil, fmt.Errorf("open segment %s: %w", path, err)
	}
	defer func() {
		if cerr := r.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close segment %s: %w", path, cerr)
		}
	}()
	var runs []string
	buf := make([]domain.Row, 0, min(sortRunRows, r.numRows))
	for done := false; !done; {
		buf = buf[:0]
		for len(buf) < sortRunRows {
			row, ok, err := r.Next()
			if err != nil {
				return nil, err
			}
			if !ok {
				done = true
				break
			}
			if m.grain != domain.GranularityNone {
				row.Time = m.grain.Truncate(time.UnixMilli(row.Time)).UnixMilli()
			}
			buf = append(buf, row)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(buf) == 0 {
			break
		}
		slices.SortStableFunc(buf, func(a, b domain.Row) int { return domain.CompareRows(a, b, m.into.Dims) })
		run, err := m.toTemp(func(emit func(domain.Row) error) error {
			for _, row := range buf {
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}
