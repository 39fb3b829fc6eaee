package parse

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// beginRow forgets the previous row's fields.
func (p *Parser) beginRow() {
	clear(p.top)
	clear(p.flatVals)
	clear(p.dimVals[:p.lastDim])
	p.lastDim = p.minDims
}

// setDim records a discovered dimension's value. Null and missing are the
// same to a string dimension, and rows end at their last value, so that
// rows stay small when discovery has found many sparse fields.
func (p *Parser) setDim(d int, f field) {
	if f.kind > kindNull {
		p.dimVals[d] = f
		p.lastDim = max(p.lastDim, d+1)
	}
}

// setTop records a top-level field (a JSON member or a CSV column); with
// discovery a new field becomes a dimension.
func (p *Parser) setTop(key string, f field) error {
	if p.badUTF8 && !utf8.ValidString(key) {
		key = strings.ToValidUTF8(key, "\uFFFD")
	}
	ki, ok := p.lookupKey(key)
	if !ok {
		if !p.discover || !p.topFields {
			return nil
		}
		ki = keyInfo{slot: -1, dim: -1}
	}
	if ki.dim == -1 && p.discover && p.topFields {
		if strings.HasPrefix(key, "__") { // reserved, like __time
			ki.dim, key = noDim, strings.Clone(key) // key may be a view into the message
		} else {
			name := strings.Clone(key)
			d, err := p.addDim(name)
			if err != nil {
				return err
			}
			ki.dim, key = d, name
		}
		p.keys[key] = ki
	}
	if ki.slot >= 0 {
		p.top[ki.slot] = f
	}
	if ki.dim >= 0 {
		p.setDim(ki.dim, f)
	}
	return nil
}

func (p *Parser) addDim(name string) (int, error) {
	if len(p.dimCols) >= maxDiscoveredDims {
		return 0, unparseable(name, "field %q would be dimension %d: discovery stops at %d (declare the dimensions or exclude fields)", name, len(p.dimCols)+1, maxDiscoveredDims)
	}
	p.dimCols = append(p.dimCols, domain.Column{Name: name, Type: domain.TypeString})
	p.dimVals = append(p.dimVals, field{})
	return len(p.dimCols) - 1, nil
}

// forget undoes what the failed message discovered.
func (p *Parser) forget() {
	p.beginRow()
	for _, c := range p.dimCols[p.mark:] {
		if ki, ok := p.keys[c.Name]; ok && ki.dim >= p.mark {
			if ki.slot < 0 {
				delete(p.keys, c.Name)
				continue
			}
			ki.dim = -1
			p.keys[c.Name] = ki
		}
	}
	for i := range p.flat {
		if p.flat[i].dim >= p.mark {
			p.flat[i].dim = -1
		}
	}
	p.dimCols = p.dimCols[:p.mark]
	p.dimVals = p.dimVals[:p.mark]
}

func (p *Parser) get(s source) field {
	switch {
	case s.flat >= 0:
		return p.flatVals[s.flat]
	case s.slot >= 0:
		return p.top[s.slot]
	}
	return field{}
}

// flatten resolves the flattenSpec's fields from the top-level ones.
func (p *Parser) flatten() error {
	for i := range p.flat {
		ff := &p.flat[i]
		var f field
		if ff.slot >= 0 {
			f = follow(p.top[ff.slot], ff.steps)
		}
		p.flatVals[i] = f
		if !p.discover || ff.excluded || f.kind == kindMissing {
			continue
		}
		if ff.dim < 0 {
			d, err := p.addDim(ff.name)
			if err != nil {
				return err
			}
			ff.dim = d
		}
		p.setDim(ff.dim, f)
	}
	return nil
}

// finishRow builds the row from the fields set since beginRow and adds it
// to p.rows. A valid row thrown away comes back as a *RejectedError.
func (p *Parser) finishRow(now time.Time) (*RejectedError, error) {
	if err := p.recordFields(); err != nil {
		return nil, err
	}
	if err := p.flatten(); err != nil {
		return nil, err
	}
	ms, err := p.timestamp(p.get(p.tsSrc))
	if err != nil {
		return nil, err
	}
	nd := len(p.declared)
	if p.discover {
		nd = p.lastDim
	}
	vals := p.values(nd + len(p.metrics))
	row := domain.Row{Time: ms, Dims: vals[:nd:nd], Metrics: vals[nd:]}
	if err := p.dimensions(row.Dims); err != nil {
		return nil, err
	}
	for i, m := range p.metrics {
		raw, present := p.text(p.get(p.metSrc[i]))
		v, err := aggregate.Init(m, raw, present)
		if err != nil {
			return nil, unparseable(m.FieldName, "metric %q: %v", m.Name, err)
		}
		row.Metrics[i] = v
	}
	if p.query != domain.GranularityNone && p.query != "" {
		row.Time = p.query.Truncate(time.UnixMilli(ms)).UnixMilli()
	}
	p.rows = append(p.rows, row)
	return p.reject(ms, now, row.Dims), nil
}

// slabRows is how many rows' values one allocation holds when rows are
// kept whole (rollup off).
const slabRows = 512

// values returns n zero cells for one row's dimensions and metrics. With
// rollup off every row is kept until its chunk is written, so cells come
// from a shared slab, one allocation per slabRows rows; with rollup on
// most rows fold into others and are dropped, and a slab would keep them
// alive, so each row gets its own.
func (p *Parser) values(n int) []domain.Value {
	if p.views {
		return p.viewValues(n)
	}
	if p.rollup {
		return make([]domain.Value, n)
	}
	if len(p.slab) < n {
		p.slab = make([]domain.Value, n*slabRows)
	}
	v := p.slab[:n:n]
	p.slab = p.slab[n:]
	return v
}

func (p *Parser) dimensions(dims []domain.Value) error {
	if i := p.topic.index; i >= 0 {
		dims[i] = p.topic.value // topic.go: no source, only this write
	}
	if p.discover {
		out, in := dims[p.minDims:], p.dimVals[p.minDims:len(dims)]
		for i := range out {
			out[i], _ = p.dimension("", domain.TypeString, in[i])
		}
		return nil
	}
	for i, c := range p.declared[:len(p.dimSrc)] { // all but the topic's
		v, err := p.dimension(c.Name, c.Type, p.get(p.dimSrc[i]))
		if err != nil {
			return err
		}
		dims[i] = v
	}
	return nil
}

// reject says whether the row, valid, is thrown away: by its untruncated
// time ms, or by the filter.
func (p *Parser) reject(ms int64, now time.Time, dims []domain.Value) *RejectedError {
	t := time.UnixMilli(ms).UTC()
	switch {
	case p.late > 0 && t.Before(now.Add(-p.late)):
		return &RejectedError{Reason: ReasonLate, Detail: fmt.Sprintf("time %s is more than %s before %s (lateMessageRejectionPeriod)", t.Format(time.RFC3339Nano), p.late, now.UTC().Format(time.RFC3339Nano))}
	case p.early > 0 && t.After(now.Add(p.early)):
		return &RejectedError{Reason: ReasonEarly, Detail: fmt.Sprintf("time %s is more than %s after %s (earlyMessageRejectionPeriod)", t.Format(time.RFC3339Nano), p.early, now.UTC().Format(time.RFC3339Nano))}
	case p.filter != nil && !p.matches(dims):
		return &RejectedError{Reason: ReasonFiltered, Detail: fmt.Sprintf("dimension %q is not %q", p.filter.Dimension, p.filter.Value)}
	}
	return nil
}

// matches applies the selector filter to the row's dimension value as
// text; null (or missing) matches only "".
func (p *Parser) matches(dims []domain.Value) bool {
	var s string
	var ok bool
	if i := p.filterDim; i >= 0 {
		if ok = !dims[i].Null; ok {
			s = valueText(dims[i], p.dimColumns()[i].Type)
		}
	} else {
		s, ok = p.text(p.get(p.filterSrc))
	}
	if !ok {
		return p.filter.Value == ""
	}
	return s == p.filter.Value
}
