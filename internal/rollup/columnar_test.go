package rollup

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// TestAddViewMatchesAdd feeds the same random rows (TestMatchesReference's)
// to a buffer through Add and to another through AddView, and requires
// the same errors, Len, Bytes, and rows in the same order. AddView's rows
// are views: their strings live in one scratch buffer and their arrays
// are reused, both scribbled over once AddView returns, so a string the
// buffer failed to copy shows. Rows compare as a run file reads them back:
// a null is null whatever its other fields hold.
func TestAddViewMatchesAdd(t *testing.T) {
	defer func(m uint32) { hashMask = m }(hashMask)
	for _, mask := range []uint32{^uint32(0), 3, 0} {
		hashMask = mask
		for seed := range uint64(150) {
			for _, rollup := range []bool{true, false} {
				name := fmt.Sprintf("mask=%x/seed=%d/rollup=%v", mask, seed, rollup)
				rng := rand.New(rand.NewPCG(seed, uint64(mask)))
				rows, cols := New(allMetrics, rollup), New(allMetrics, rollup)
				dims := randomCols(rng)
				var v viewer
				for chunk := range 3 {
					for range 50 + rng.IntN(400) {
						r := randomRow(rng, len(dims))
						for len(r.Dims) < len(dims) {
							r.Dims = append(r.Dims, domain.NullValue())
						}
						r.Dims = exactCopy(r.Dims)
						view := v.view(r)
						err, viewErr := rows.Add(r), cols.AddView(view)
						v.scribble()
						require.Equal(t, err, viewErr, name)
						require.Equal(t, rows.Len(), cols.Len(), name)
						require.Equal(t, rows.Bytes(), cols.Bytes(), name)
					}
					want, got := rows.Rows(dims), cols.Rows(dims)
					requireRows(t, canonical(want), canonical(got), fmt.Sprintf("%s chunk %d", name, chunk))
					require.Zero(t, cols.Len())
					require.Zero(t, cols.Bytes())
				}
			}
		}
	}
}

// viewer makes rows whose strings and arrays it overwrites later.
type viewer struct {
	buf   []byte
	cells []domain.Value
	row   domain.Row
}

func (v *viewer) view(r domain.Row) *domain.Row {
	v.buf, v.cells = v.buf[:0], v.cells[:0]
	for _, x := range append(append([]domain.Value(nil), r.Dims...), r.Metrics...) {
		v.buf = append(v.buf, x.S...)
		v.cells = append(v.cells, x)
	}
	// One array, so that the strings stay put: point each into it.
	off := 0
	for i := range v.cells {
		n := len(v.cells[i].S)
		if n > 0 {
			v.cells[i].S = unsafe.String(&v.buf[off], n)
		}
		off += n
	}
	nd := len(r.Dims)
	v.row = domain.Row{Time: r.Time, Dims: v.cells[:nd:nd], Metrics: v.cells[nd:]}
	return &v.row
}

func (v *viewer) scribble() {
	for i := range v.buf {
		v.buf[i] = '#'
	}
	for i := range v.cells {
		v.cells[i].N ^= 0x5a5a
	}
}

// canonical pads rows to the longest row's dimensions and makes every
// null the null value.
func canonical(rows []domain.Row) []domain.Row {
	n := 0
	for _, r := range rows {
		n = max(n, len(r.Dims))
	}
	out := make([]domain.Row, len(rows))
	for i, r := range rows {
		c := domain.Row{Time: r.Time, Dims: make([]domain.Value, n), Metrics: append([]domain.Value(nil), r.Metrics...)}
		for d := range c.Dims {
			c.Dims[d] = r.Dim(d)
		}
		for _, vs := range [][]domain.Value{c.Dims, c.Metrics} {
			for k := range vs {
				if vs[k].Null {
					vs[k] = domain.NullValue()
				}
			}
		}
		out[i] = c
	}
	return out
}

// A row shorter than the columns has nulls for the rest; longer is an
// error, as is mixing Add and AddView.
func TestAddViewShapes(t *testing.T) {
	metrics := allMetrics[:1]
	one := []domain.Value{domain.LongValue(1)}
	b := New(metrics, true)
	a, x := domain.StringValue("a"), domain.StringValue("x")
	require.NoError(t, b.AddView(&domain.Row{Time: 1, Dims: []domain.Value{a, domain.NullValue()}, Metrics: one}))
	require.NoError(t, b.AddView(&domain.Row{Time: 1, Dims: []domain.Value{a}, Metrics: one}))
	require.Error(t, b.AddView(&domain.Row{Time: 1, Dims: []domain.Value{a, x, x}, Metrics: one}))
	require.Error(t, b.Add(domain.Row{Time: 1, Dims: []domain.Value{a}, Metrics: one}))
	require.Equal(t, 1, b.Len())
	rows := b.Rows([]domain.Column{{Name: "d0", Type: domain.TypeString}, {Name: "d1", Type: domain.TypeString}})
	require.Equal(t, []domain.Row{{Time: 1, Dims: []domain.Value{a, domain.NullValue()}, Metrics: []domain.Value{domain.LongValue(2)}}}, rows)

	b = New(metrics, false)
	require.NoError(t, b.Add(domain.Row{Time: 1, Dims: []domain.Value{a}, Metrics: one}))
	require.Error(t, b.AddView(&domain.Row{Time: 1, Dims: []domain.Value{a}, Metrics: one}))
}

// With rollup off, a dimension whose values barely repeat (a unique id)
// stops deduplicating after columns.plainCheckRows rows; the rows and
// their order stay the row path's, repeats and ties included.
func TestAddViewPlainColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 1))
	dims := []domain.Column{{Name: "id", Type: domain.TypeString}, {Name: "n", Type: domain.TypeLong}, {Name: "s", Type: domain.TypeString}}
	metrics := allMetrics[:2]
	rows, cols := New(metrics, false), New(metrics, false)
	var v viewer
	for i := range 20_000 {
		id := domain.StringValue(fmt.Sprint("id-", rng.IntN(1_000_000)))
		switch rng.IntN(20) {
		case 0:
			id = domain.NullValue()
		case 1:
			id = domain.StringValue("repeated")
		}
		r := domain.Row{Time: int64(i / 7), Dims: []domain.Value{id, domain.LongValue(int64(rng.IntN(3))), domain.StringValue(fmt.Sprint("s", rng.IntN(4)))},
			Metrics: []domain.Value{domain.LongValue(1), domain.LongValue(int64(i))}}
		require.NoError(t, rows.Add(r))
		require.NoError(t, cols.AddView(v.view(r)))
		v.scribble()
	}
	require.True(t, cols.cols.Dims[0].Dict.Plain(), "the id column went plain")
	require.False(t, cols.cols.Dims[2].Dict.Plain(), "the repeating column did not")
	require.Equal(t, rows.Bytes(), cols.Bytes())
	requireRows(t, canonical(rows.Rows(dims)), canonical(cols.Rows(dims)), "plain")
}
