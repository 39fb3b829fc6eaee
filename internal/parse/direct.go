package parse

import (
	"time"
	"unicode/utf8"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// The direct path parses a JSON message straight into its row, for the
// specs most pipelines run: a JSON value (not the kafka format), no
// flattenSpec, declared dimensions, and no filter on a field that is not
// a dimension. It reads the message once, as the general path
// (parseJSON) does, but
//
//   - resolves each key to the slot it feeds by one comparison of its
//     bytes with the key found at the same position in the last message
//     (keycache.go), instead of scanning the key and then looking it up;
//   - keeps each value the spec reads as offsets into the message and,
//     for a whole number, the number itself, read while it is scanned
//     (directscan.go), instead of a field of its text;
//   - checks only the strings it keeps for invalid UTF-8, rather than the
//     whole message first;
//   - and makes the row's cells from those values: a plain string
//     dimension is a view of the message, a long metric the number read.
//
// Anything else a value may hold (escapes, other kinds, numbers with a
// fraction or exponent, or of more than 18 digits) goes through the
// general path's own conversions (text, dimension, aggregate.Init), and a
// message the direct path cannot finish (invalid JSON, or any error) is
// parsed again by the general path, which gives the error. So the rows,
// values and errors are the general path's, byte for byte
// (FuzzDirectIsGeneral).
//
// Layout, per parser: vals holds one directVal per top-level slot (the
// slots of keys), cleared per message; dimSlots and metSlots give the
// slot each declared dimension (all but the topic's) and metric reads
// (-1: none, as count's); keys is the key cache.
type direct struct {
	vals     []directVal
	tsSlot   int
	dimSlots []int
	dimTypes []directType // by declared dimension (all but the topic's)
	metSlots []int
	metTypes []directType // by metric
	keys     keyCache
}

// directType says which cells the direct path makes itself: a string or
// long dimension's, a count's and a long metric's (longSum, longMin,
// longMax); the others go through the general conversions.
type directType uint8

const (
	directOther directType = iota
	directString
	directLong
	directCount
)

// directVal is one top-level value of the message being parsed: where
// it lies, pointer-free (so writing it costs no write barrier and
// clearing it no scan), its kind and what the scan learnt of it. text
// is msg[start:end], as field.text is: a string's content, or with esc
// its quoted JSON; the JSON text of other kinds; "" for null.
type directVal struct {
	start, end int
	n          int64 // with whole: the number
	kind       kind
	esc        bool // a string with escapes
	high       bool // a string with a byte from 0x80 (maybe not UTF-8)
	whole      bool // a JSON integer of up to 18 digits, n its value
}

func (v *directVal) field(msg string) field {
	return field{text: msg[v.start:v.end], kind: v.kind, esc: v.esc}
}

// newDirect returns the direct path for p, or nil if p's spec is not one
// it takes. It runs once every source is wired.
func newDirect(p *Parser) *direct {
	if p.csv != nil || p.dec != nil || p.unframe != nil || p.kafka != nil || len(p.flat) > 0 ||
		p.discover || !p.topFields || (p.filter != nil && p.filterDim < 0) || p.tsSrc.slot < 0 {
		return nil
	}
	d := &direct{vals: make([]directVal, len(p.top)), tsSlot: p.tsSrc.slot}
	for i, s := range p.dimSrc {
		if s.slot < 0 {
			return nil
		}
		t := directOther
		switch p.declared[i].Type {
		case domain.TypeString:
			t = directString
		case domain.TypeLong:
			t = directLong
		}
		d.dimSlots, d.dimTypes = append(d.dimSlots, s.slot), append(d.dimTypes, t)
	}
	for i, m := range p.metrics {
		t := directOther
		switch m.Type {
		case domain.MetricCount:
			t = directCount
		case domain.MetricLongSum, domain.MetricLongMin, domain.MetricLongMax:
			t = directLong
		}
		d.metSlots, d.metTypes = append(d.metSlots, p.metSrc[i].slot), append(d.metTypes, t)
	}
	d.keys.init(p.lookupKey)
	return d
}

// parseDirect parses msg into p.rows by the direct path. ok is false
// when it could not: p.rows and p.scratch are then as they were, and the
// general path must parse msg. Otherwise the message's row is in p.rows,
// unless it was thrown away (reject).
func (p *Parser) parseDirect(msg string, now time.Time) (reject *RejectedError, ok bool) {
	d := p.direct
	clear(d.vals)
	if !d.scan(msg) {
		return nil, false
	}
	// A message's validity as UTF-8 only gates the general path's checks
	// of each string it keeps (text, setTop); the direct path checks
	// each one it keeps, which gives the same strings.
	p.badUTF8 = true
	rows, scratch, slab := len(p.rows), len(p.scratch), p.slab
	reject, ok = p.finishDirect(msg, now)
	if !ok {
		p.rows, p.scratch, p.slab = p.rows[:rows], p.scratch[:scratch], slab
	}
	return reject, ok
}

// finishDirect makes the row of the values scanned, as finishRow does;
// ok is false on any error (the general path then gives it).
func (p *Parser) finishDirect(msg string, now time.Time) (*RejectedError, bool) {
	d := p.direct
	ms, err := p.timestamp(d.vals[d.tsSlot].field(msg))
	if err != nil {
		return nil, false
	}
	nd := len(p.declared)
	vals := p.values(nd + len(p.metrics))
	row := domain.Row{Time: ms, Dims: vals[:nd:nd], Metrics: vals[nd:]}
	if i := p.topic.index; i >= 0 {
		row.Dims[i] = p.topic.value
	}
	for i, slot := range d.dimSlots {
		v, t := &d.vals[slot], d.dimTypes[i]
		switch {
		case t == directString && v.kind == kindString && !v.esc && (!v.high || utf8.ValidString(msg[v.start:v.end])):
			s := msg[v.start:v.end]
			if !p.views {
				s = p.keep(s)
			}
			row.Dims[i] = domain.StringValue(s)
		case t == directLong && v.whole:
			row.Dims[i] = domain.LongValue(v.n)
		default:
			c := &p.declared[i]
			dv, err := p.dimension(c.Name, c.Type, v.field(msg))
			if err != nil {
				return nil, false
			}
			row.Dims[i] = dv
		}
	}
	for i, slot := range d.metSlots {
		t := d.metTypes[i]
		switch {
		case t == directCount:
			row.Metrics[i] = domain.LongValue(1) // as aggregate.Init
		case t == directLong && slot >= 0 && d.vals[slot].whole:
			row.Metrics[i] = domain.LongValue(d.vals[slot].n)
		default:
			var f field
			if slot >= 0 {
				f = d.vals[slot].field(msg)
			}
			raw, present := p.text(f)
			v, err := aggregate.Init(p.metrics[i], raw, present)
			if err != nil {
				return nil, false
			}
			row.Metrics[i] = v
		}
	}
	if p.query != domain.GranularityNone && p.query != "" {
		row.Time = p.query.Truncate(time.UnixMilli(ms)).UnixMilli()
	}
	if reject := p.reject(ms, now, row.Dims); reject != nil {
		return reject, true
	}
	p.rows = append(p.rows, row)
	return nil, true
}
