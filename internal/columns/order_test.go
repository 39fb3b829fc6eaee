package columns

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"handoff/internal/domain"
)

// compareOrder is Sort without sortPacked: the comparison sort alone.
func (c *Chunk) compareOrder(types []domain.ColumnType, stable bool) []int32 {
	order := make([]int32, c.Len())
	for i := range order {
		order[i] = int32(i)
	}
	c.rank(types)
	total := !slices.Contains(types, domain.TypeDouble)
	less := c.compare(types, stable && total)
	if stable && !total {
		slices.SortStableFunc(order, less)
	} else {
		slices.SortFunc(order, less)
	}
	return order
}

// testChunk makes n rows of random times (over span ms from base) and
// dimensions of the given types and cardinalities, with nulls and rows
// shorter than the chunk; unique drops rows whose time and dimensions
// an earlier row has, as rollup does.
func testChunk(rng *rand.Rand, types []domain.ColumnType, card []int, n int, base, span int64, unique bool) *Chunk {
	c := New(len(types), nil)
	seen := map[string]bool{}
	var codes []uint32
	for range n {
		r := domain.Row{Time: base + rng.Int64N(span)}
		for d := range rng.IntN(len(types) + 1) {
			k := rng.IntN(card[d])
			v := domain.StringValue(fmt.Sprintf("v%03d", (k*7919)%card[d]))
			if types[d] == domain.TypeLong {
				v = domain.LongValue(int64(k) - int64(card[d])/2)
			}
			if rng.IntN(10) == 0 {
				v = domain.NullValue()
			}
			r.Dims = append(r.Dims, v)
		}
		codes = c.Codes(&r, codes)
		if key := fmt.Sprint(r.Time, codes); unique {
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		c.Append(r.Time, codes, nil)
	}
	return c
}

// TestSortPackedMatchesCompare: Sort's packed path orders rows exactly
// as the comparison sort does, stable (ties by index) and, for unique
// keys, unstable; where it cannot (ranks and times too wide, a column
// unranked, keys that tie unstable) the comparison sort runs and the
// result is still its.
func TestSortPackedMatchesCompare(t *testing.T) {
	str, long := domain.TypeString, domain.TypeLong
	cases := []struct {
		types      []domain.ColumnType
		card       []int
		base, span int64
		packed     bool // the packed path takes a large chunk
	}{
		{[]domain.ColumnType{str, str, str}, []int{50, 8, 3}, 1_700_000_000_000, 360_000, true},
		{[]domain.ColumnType{long, str}, []int{20, 5}, -5_000, 10_000, true},
		{[]domain.ColumnType{}, nil, 0, 3, true},
		{[]domain.ColumnType{str}, []int{1}, math.MinInt64, 1 << 40, true},
		// A time range of 63 bits leaves too little for the rest.
		{[]domain.ColumnType{str, str}, []int{50, 8}, math.MinInt64 / 2, math.MaxInt64, false},
		// Too many distinct values for a rank: compared by value.
		{[]domain.ColumnType{str, str}, []int{5_000, 8}, 0, 1_000, false},
	}
	for ci, tc := range cases {
		for seed := range uint64(6) {
			for _, stable := range []bool{true, false} {
				rng := rand.New(rand.NewPCG(seed, uint64(ci)))
				n := []int{0, 1, 2, 100, 5_000, 20_000}[seed]
				c := testChunk(rng, tc.types, tc.card, n, tc.base, tc.span, !stable)
				want := c.compareOrder(tc.types, stable)
				c.rank(tc.types)
				c.order = c.order[:0]
				for i := range c.Len() {
					c.order = append(c.order, int32(i))
				}
				packed := c.sortPacked(stable)
				got := c.Sort(tc.types, stable)
				name := fmt.Sprintf("case %d seed %d stable %v: %d rows", ci, seed, stable, c.Len())
				if !slices.Equal(want, got) {
					t.Fatalf("%s: Sort's order differs from the comparison sort's", name)
				}
				if tc.packed && !packed && c.Len() >= 5_000 { // a small chunk's columns are not ranked
					t.Fatalf("%s: the packed path did not sort", name)
				}
				if !tc.packed && packed && c.Len() > 1 {
					t.Fatalf("%s: the packed path sorted what does not fit", name)
				}
			}
		}
	}
}

// TestSortPackedRefusesTies: unstable, rows that compare equal are left
// to the comparison sort, whose order among them the packed path would
// not repeat.
func TestSortPackedRefusesTies(t *testing.T) {
	c := New(1, nil)
	codes := []uint32{0}
	for i := range 100 {
		r := domain.Row{Time: int64(i % 3), Dims: []domain.Value{domain.StringValue("a")}}
		codes = c.Codes(&r, codes)
		c.Append(r.Time, codes, nil)
	}
	types := []domain.ColumnType{domain.TypeString}
	want := c.compareOrder(types, false)
	c.rank(types)
	if c.sortPacked(false) {
		t.Fatal("the packed path sorted ties, unstable")
	}
	if got := c.Sort(types, false); !slices.Equal(want, got) {
		t.Fatal("Sort's order differs from the comparison sort's")
	}
}

// BenchmarkSort sorts a chunk of 100,000 rows shaped as the bench's
// backlog (events 3.6 ms apart over four partitions, the chunk reading
// two of them in fetches of 5,000 records; five string dimensions of
// 1,000, 8, 30, 3 and 5 values), rollup off: packed keys, and the
// comparison sort for comparison.
func BenchmarkSort(b *testing.B) {
	types := []domain.ColumnType{domain.TypeString, domain.TypeString, domain.TypeString, domain.TypeString, domain.TypeString}
	rng := rand.New(rand.NewPCG(1, 38))
	c := New(len(types), nil)
	var codes []uint32
	const n, fetch = 100_000, 5_000
	card := []int{1000, 8, 30, 3, 5}
	for i := range n {
		batch, j := i/fetch, i%fetch
		part := batch % 2
		event := (batch/2*fetch+j)*4 + part // the event's number in the backlog
		r := domain.Row{Time: 1_700_000_000_000 + int64(event)*36/10, Dims: make([]domain.Value, len(card))}
		for d, k := range card {
			r.Dims[d] = domain.StringValue(fmt.Sprintf("v%d-%d", d, int(float64(k)*math.Pow(rng.Float64(), 4))))
		}
		codes = c.Codes(&r, codes)
		c.Append(r.Time, codes, nil)
	}
	b.Run("packed", func(b *testing.B) {
		for b.Loop() {
			c.Sort(types, true)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
	})
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			c.compareOrder(types, true)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
	})
}

// BenchmarkCodes looks up the dimensions of 100,000 rows shaped as the
// bench's backlog (five string dimensions of 1,000, 8, 30, 3 and 5
// values, skewed) in a chunk's dictionaries, as AddView does per row.
func BenchmarkCodes(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 38))
	card := []int{1000, 8, 30, 3, 5}
	const n = 100_000
	rows := make([]domain.Row, n)
	for i := range rows {
		rows[i].Dims = make([]domain.Value, len(card))
		for d, k := range card {
			rows[i].Dims[d] = domain.StringValue(fmt.Sprintf("v%d-%d", d, int(float64(k)*math.Pow(rng.Float64(), 4))))
		}
	}
	c := New(len(card), nil)
	var codes []uint32
	b.ResetTimer()
	for b.Loop() {
		c.Reset()
		for i := range rows {
			codes = c.Codes(&rows[i], codes)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}
