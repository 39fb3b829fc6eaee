package rollup

import (
	"fmt"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// combine folds r's metrics into held row i.
func (b *Buffer) combine(i int, r domain.Row) error {
	held := b.rows[i].Metrics
	for j, m := range b.metrics {
		if m.Type == domain.MetricHyperUnique {
			if err := b.mergeSketch(i, j, r.Metrics[j]); err != nil {
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
func (b *Buffer) mergeSketch(i, j int, v domain.Value) error {
	if v.Null {
		return nil
	}
	held := &b.rows[i].Metrics[j]
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
