package segment

import "handoff/internal/domain"

// cellRing hands out the cells of the rows a merge decodes from a run, one
// array reused block after block instead of a new one per 256 rows.
//
// Layout: buf is a ring of cells; a row takes per consecutive cells at at,
// and at moves on by per, back to 0 once when the row would not fit
// before the end. A block's rows are decoded at once and all live until
// the next block is decoded; of the blocks before, only the last row (the
// per cells before at) is still held, by the merge's cursor or emit. So
// from low, that row's first cell, to the end of buf nothing may be
// carved again after a wrap, and a row that would cross low, or wrap
// twice, goes to a new array twice the size (the rows already carved keep
// the old one alive). After the first blocks the ring holds a block and a
// row and allocates no more.
type cellRing struct {
	buf     []domain.Value
	at      int  // next free cell
	low     int  // first cell in use when the block started
	wrapped bool // the block's rows went back to 0
}

// startBlock marks the last row handed out as the one that must survive
// the block about to be decoded.
func (c *cellRing) startBlock(per int) {
	c.low, c.wrapped = max(c.at-per, 0), false
}

// next returns per fresh cells, none of them a row's still in use.
func (c *cellRing) next(per int) []domain.Value {
	if per == 0 {
		return nil
	}
	p := c.at
	if !c.wrapped && p+per > len(c.buf) {
		p, c.wrapped = 0, true
	}
	if c.wrapped && p+per > c.low {
		c.buf = make([]domain.Value, max(2*len(c.buf), 256*per))
		p, c.low, c.wrapped = 0, 0, false
	}
	c.at = p + per
	return c.buf[p:c.at:c.at]
}
