package rollup

import (
	"fmt"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// merger folds rows' metrics into the cells of held rows, each through
// internal/aggregate, and counts the heap that adds. A Buffer embeds one,
// as does the tests' reference buffer.
type merger struct {
	metrics []domain.MetricSpec
	// sketches are the decoded hyperUnique cells that rows merged into;
	// Rows encodes them back into their cells.
	sketches map[cell]*aggregate.Sketch
	content  int64 // estimated heap of everything but the rows slice
}

// combine folds r's metrics into held row rows[i].
func (b *merger) combine(rows []domain.Row, i int, r domain.Row) error {
	held := rows[i].Metrics
	for j, m := range b.metrics {
		if m.Type == domain.MetricHyperUnique {
			if err := b.mergeSketch(rows, i, j, r.Metrics[j]); err != nil {
				return err
			}
			continue
		}
		v, err := aggregate.Combine(m, held[j], r.Metrics[j])
		if err != nil {
			return err
		}
		held[j] = v
	}
	return nil
}

// mergeSketch merges v into cell (i, j), decoding the cell once, on its
// first merge, rather than re-encoding a growing sketch per row.
func (b *merger) mergeSketch(rows []domain.Row, i, j int, v domain.Value) error {
	if v.Null {
		return nil
	}
	held := &rows[i].Metrics[j]
	c := cell{i, j}
	s := b.sketches[c]
	if s == nil {
		if held.Null {
			*held = v
			b.content += int64(len(v.S))
			return nil
		}
		s = new(aggregate.Sketch)
		if err := s.Merge(*held); err != nil {
			return fmt.Errorf("metric %q: %w", b.metrics[j].Name, err)
		}
		b.sketches[c] = s
		b.content += sketchBytes + int64(s.Bytes())
	}
	before := s.Bytes()
	if err := s.Merge(v); err != nil {
		return fmt.Errorf("metric %q: %w", b.metrics[j].Name, err)
	}
	b.content += int64(s.Bytes() - before)
	return nil
}
