package rollup

import "handoff/internal/domain"

// order is domain.CompareRows over dims, faster: a dimension whose Null,
// N and S are all equal (for interned strings, the same pointer) compares
// equal without a look at its column type, and a row's dims past the
// other's end compare against null once. It returns the same sign for
// every pair of rows, so a sort with it orders rows exactly as one with
// CompareRows.
func order(dims []domain.Column) func(x, y domain.Row) int {
	return func(x, y domain.Row) int {
		if x.Time != y.Time {
			if x.Time < y.Time {
				return -1
			}
			return 1
		}
		xd, yd := x.Dims, y.Dims
		if len(xd) > len(dims) {
			xd = xd[:len(dims)]
		}
		if len(yd) > len(dims) {
			yd = yd[:len(dims)]
		}
		n := min(len(xd), len(yd))
		for i := range n {
			a, b := &xd[i], &yd[i]
			if a.Null == b.Null && a.N == b.N && a.S == b.S {
				continue
			}
			if d := domain.CompareValues(*a, *b, dims[i].Type); d != 0 {
				return d
			}
		}
		// Past the shorter row, its dims are null: a non-null sorts after.
		for _, v := range xd[n:] {
			if !v.Null {
				return 1
			}
		}
		for _, v := range yd[n:] {
			if !v.Null {
				return -1
			}
		}
		return 0
	}
}
