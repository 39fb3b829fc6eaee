package columns

import (
	"cmp"
	"math/bits"
	"slices"

	"handoff/internal/domain"
)

// maxRankedShare: a column is ranked when it has at most one distinct
// value in this many rows.
const maxRankedShare = 8

// Sort orders the chunk's rows by domain.CompareRows over dimension
// columns of the given types, rows by index, without moving a row: the
// result is the rows' indexes in order (the chunk's own scratch, valid
// until the next Sort or Reset). Stable keeps the rows that compare equal
// in index order.
//
// Its comparison gives CompareRows' sign for every pair: a dimension's
// codes compare by rank in the sorted dictionary (equal values, by
// CompareValues, share a rank), a double's by its values, since NaN
// compares equal to every double and so has no rank. And it runs the
// algorithm the row sort ran (slices.SortFunc, or SortStableFunc when
// stable), whose steps depend only on those signs, over the indexes in
// the order the rows were held: the order is the row sort's, ties
// included. Without a double dimension the comparison is a total order
// and, stable, ties go by index, which a faster unstable sort keeps.
func (c *Chunk) Sort(types []domain.ColumnType, stable bool) []int32 {
	c.order = c.order[:0]
	for i := range c.Len() {
		c.order = append(c.order, int32(i))
	}
	c.rank(types)
	total := !slices.Contains(types, domain.TypeDouble)
	if total && c.sortPacked(stable) {
		return c.order
	}
	less := c.compare(types, stable && total)
	if stable && !total {
		slices.SortStableFunc(c.order, less)
	} else {
		slices.SortFunc(c.order, less)
	}
	return c.order
}

// compare orders two rows by time, then dimension by dimension; byIndex
// breaks ties by index.
func (c *Chunk) compare(types []domain.ColumnType, byIndex bool) func(a, b int32) int {
	return func(a, b int32) int {
		if x, y := c.Time[a], c.Time[b]; x != y {
			return cmp.Compare(x, y)
		}
		for d := range c.Dims {
			col := &c.Dims[d]
			x, y := col.Codes[a], col.Codes[b]
			if x == y {
				continue
			}
			if col.ranks == nil {
				if r := domain.CompareValues(col.Dict.Value(x), col.Dict.Value(y), types[d]); r != 0 {
					return r
				}
				continue
			}
			if r := cmp.Compare(col.ranks[x], col.ranks[y]); r != 0 {
				return r
			}
		}
		if byIndex {
			return cmp.Compare(a, b)
		}
		return 0
	}
}

// rank gives each code of a string or long column its rank among the
// column's values by CompareValues: null (code 0) is 0, and values that
// compare equal (the same string with different numbers, in no column
// the parser makes) share one. A column of more than one distinct value
// in maxRankedShare rows is left unranked (ranks nil): sorting its
// dictionary (a unique id's: one value a row) costs more than the
// comparisons that ranks make cheaper, which come only on ties of time
// and the dimensions before it.
func (c *Chunk) rank(types []domain.ColumnType) {
	for d := range c.Dims {
		col := &c.Dims[d]
		if types[d] == domain.TypeDouble || col.Dict.Len()*maxRankedShare > c.Len() {
			col.ranks = nil // compare the values
			continue
		}
		n := col.Dict.Len()
		col.byValue = col.byValue[:0]
		for code := range n {
			col.byValue = append(col.byValue, uint32(code+1))
		}
		t := types[d]
		slices.SortFunc(col.byValue, func(x, y uint32) int {
			return domain.CompareValues(col.Dict.values[x-1], col.Dict.values[y-1], t)
		})
		col.ranks = slices.Grow(col.rankBuf[:0], n+1)[:n+1]
		col.rankBuf = col.ranks
		col.ranks[0] = 0
		var r uint32
		for i, code := range col.byValue {
			if i == 0 || domain.CompareValues(col.Dict.values[col.byValue[i-1]-1], col.Dict.values[code-1], t) != 0 {
				r++
			}
			col.ranks[code] = r
		}
	}
}

// sortPacked orders the rows, when every dimension is ranked and the
// time's range, the dimensions' ranks and the row index fit in 64 bits
// together, by one integer per row: the time (less the chunk's least),
// each rank, then the index, packed high to low, so that the integers
// sort as compare orders the rows with ties broken by index. That is
// compare's own order when stable. Unstable (rollup on), the order of
// rows that compare equal is the algorithm's, which this one would not
// repeat: it sorts only when no two rows compare equal (rollup keys are
// unique, and their ranks are unless two values compare equal), and
// otherwise reports false, having changed nothing.
func (c *Chunk) sortPacked(stable bool) bool {
	n := c.Len()
	if n < 2 {
		return true
	}
	lo, hi := c.Time[0], c.Time[0]
	for _, t := range c.Time {
		lo, hi = min(lo, t), max(hi, t)
	}
	width := bits.Len64(uint64(hi) - uint64(lo)) // the range, even past MaxInt64
	c.shifts = c.shifts[:0]
	for d := range c.Dims {
		col := &c.Dims[d]
		if col.ranks == nil {
			return false
		}
		w := bits.Len32(slices.Max(col.ranks))
		c.shifts = append(c.shifts, uint8(w))
		width += w
	}
	idx := bits.Len32(uint32(n - 1))
	if width+idx > 64 {
		return false
	}
	keys := slices.Grow(c.keys[:0], n)[:n]
	c.keys = keys
	for i := range n {
		k := uint64(c.Time[i]) - uint64(lo)
		for d := range c.Dims {
			col := &c.Dims[d]
			k = k<<c.shifts[d] | uint64(col.ranks[col.Codes[i]])
		}
		keys[i] = k<<idx | uint64(i)
	}
	slices.Sort(keys) // a radix sort measured slower: its scattered writes miss
	if !stable {
		for i := 1; i < n; i++ {
			if keys[i-1]>>idx == keys[i]>>idx {
				return false // c.order is untouched: compare sorts
			}
		}
	}
	mask := uint64(1)<<idx - 1
	for i, k := range keys {
		c.order[i] = int32(k & mask)
	}
	return true
}

// slabRows is how many rows' cells RowsIn allocates at once: the
// parser's row path allocated them so, and one allocation for a whole
// chunk (tens of MiB) measured a higher peak RSS.
const slabRows = 512

// RowsIn appends the chunk's rows to dst in the given order (from Sort)
// and returns it. Every row has all the chunk's dimensions; their cells
// come from allocations of slabRows rows, filled row after row, and their
// strings are the dictionaries'.
func (c *Chunk) RowsIn(order []int32, dst []domain.Row) []domain.Row {
	nd, nm := len(c.Dims), len(c.Metrics)
	w := nd + nm
	var cells []domain.Value
	for _, i := range order {
		if len(cells) == 0 {
			cells = make([]domain.Value, slabRows*w)
		}
		row := cells[:w:w]
		cells = cells[w:]
		for d := range c.Dims {
			col := &c.Dims[d]
			if code := col.Codes[i]; code != 0 {
				row[d] = col.Dict.values[code-1]
			} else {
				row[d].Null = true
			}
		}
		for m := range c.Metrics {
			col, v := &c.Metrics[m], &row[nd+m]
			v.N, v.Null = col.N[i], col.Null[i]
			if col.S != nil {
				v.S = col.S[i]
			}
		}
		dst = append(dst, domain.Row{Time: c.Time[i], Dims: row[:nd:nd], Metrics: row[nd:]})
	}
	return dst
}
