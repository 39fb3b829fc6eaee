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
			if err := b.mergeSketch(&held[j], cell{i, j}, r.Metrics[j]); err != nil {
				return err
			}
			continue
		}
		if err := combineInto(m, &held[j], r.Metrics[j]); err != nil {
			return err
		}
	}
	return nil
}

// combineInto folds v into held, a cell of metric m (not hyperUnique).
func combineInto(m domain.MetricSpec, held *domain.Value, v domain.Value) error {
	x, err := aggregate.Combine(m, *held, v)
	if err != nil {
		return err
	}
	*held = x
	return nil
}

// mergeSketch merges v into cell c, held, decoding the cell once, on its
// first merge, rather than re-encoding a growing sketch per row.
func (b *merger) mergeSketch(held *domain.Value, c cell, v domain.Value) error {
	if v.Null {
		return nil
	}
	j := c.metric
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
