package parse

import "handoff/internal/domain"

// Rows as views: ParseRecordView hands each row over without making it
// the caller's. Its strings may point into the message (or the decoder's
// and the parser's buffers), and its cells are the parser's scratch,
// reused by the next message; a caller that keeps a row copies it, as a
// column builder does when it dictionary-encodes the row's dimensions
// (internal/columns). Nothing is allocated per row and no string is
// interned: the rows, values and errors are otherwise Parse's.

// FixedDims reports whether every row has the same dimensions, the
// declared ones (Schema's, which do not change): false with schemaless
// discovery.
func (p *Parser) FixedDims() bool { return !p.discover }

// viewValues returns n zero cells from the message's scratch. A message
// of many rows (CSV) may outgrow it: the rows before keep the old array.
func (p *Parser) viewValues(n int) []domain.Value {
	if cap(p.scratch)-len(p.scratch) < n {
		p.scratch = make([]domain.Value, 0, max(2*cap(p.scratch), 4*n))
	}
	start := len(p.scratch)
	p.scratch = p.scratch[:start+n]
	v := p.scratch[start : start+n : start+n]
	clear(v)
	return v
}
