package segment

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/columns"
	"handoff/internal/domain"
)

// randomChunk fills a chunk of n rows of schema's metrics and dims
// dimensions (at most the schema's), values drawn so that dictionaries
// repeat, with nulls, -0 and NaN among the doubles, empty and long
// strings, sketches, and rows that give fewer dimensions than the chunk
// has (null past their end).
func randomChunk(t testing.TB, rng *rand.Rand, schema domain.Schema, dims, n int) *columns.Chunk {
	c := columns.New(dims, schema.Metrics)
	sketches := []domain.Value{sketch(t, "a"), sketch(t, "b", "c"), null()}
	var codes []uint32
	for range n {
		r := domain.Row{Time: 1_700_000_000_000 + rng.Int64N(5_000)}
		for d := range rng.IntN(dims + 1) {
			var v domain.Value
			switch schema.Dims[d].Type {
			case domain.TypeLong:
				v = long(rng.Int64N(7) - 3)
			case domain.TypeDouble:
				v = dbl([]float64{0, math.Copysign(0, -1), math.NaN(), 1.5, -2}[rng.IntN(5)])
			default:
				v = str([]string{"", "x", "ünï", strings.Repeat("long", 50), fmt.Sprint(rng.IntN(40))}[rng.IntN(5)])
			}
			if rng.IntN(6) == 0 {
				v = null()
			}
			r.Dims = append(r.Dims, v)
		}
		ms := make([]domain.Value, len(schema.Metrics))
		for m, spec := range schema.Metrics {
			switch spec.ColumnType() {
			case domain.TypeLong:
				ms[m] = long(rng.Int64() - math.MaxInt64/2)
			case domain.TypeDouble:
				ms[m] = dbl(rng.NormFloat64())
			default:
				ms[m] = sketches[rng.IntN(len(sketches))]
			}
			if rng.IntN(8) == 0 {
				ms[m] = null()
			}
		}
		codes = c.Codes(&r, codes)
		c.Append(r.Time, codes, ms)
	}
	return c
}

// runOf writes one run of schema on a buffer by write.
func runOf(t testing.TB, schema domain.Schema, write func(w *RunWriter) error) ([]byte, Info) {
	var b bytes.Buffer
	w, err := NewRunWriter(&b, schema)
	require.NoError(t, err)
	require.NoError(t, write(w))
	info, err := w.Close()
	require.NoError(t, err)
	return b.Bytes(), info
}

// TestWriteColumnsMatchesWrite: a chunk's columns written in its sorted
// order are the bytes of the rows RowsIn makes of them written by Write,
// for every column type, nulls, dimensions past the chunk's columns and
// past a row's end, one and several blocks, in one call or several, and
// the run reads back as those rows.
func TestWriteColumnsMatchesWrite(t *testing.T) {
	schema := everyType()
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 38))
		dims := rng.IntN(len(schema.Dims) + 1)
		n := []int{0, 1, 17, 3_000, 12_000}[seed%5]
		c := randomChunk(t, rng, schema, dims, n)
		types := make([]domain.ColumnType, dims)
		for d := range types {
			types[d] = schema.Dims[d].Type
		}
		order := c.Sort(types, seed%2 == 0)
		rows := c.RowsIn(order, nil)
		want, wantInfo := runOf(t, schema, func(w *RunWriter) error { return w.Write(rows...) })
		got, gotInfo := runOf(t, schema, func(w *RunWriter) error { return w.WriteColumns(c, order) })
		name := fmt.Sprintf("seed %d: %d rows, %d of %d dims", seed, n, dims, len(schema.Dims))
		require.True(t, bytes.Equal(want, got), name)
		require.Equal(t, wantInfo, gotInfo, name)
		// In pieces, as a writer fed chunk after chunk.
		cut := len(order) / 3
		got, _ = runOf(t, schema, func(w *RunWriter) error {
			if err := w.WriteColumns(c, order[:cut]); err != nil {
				return err
			}
			return w.WriteColumns(c, order[cut:])
		})
		require.True(t, bytes.Equal(want, got), "%s, in two calls", name)
		if n > 0 {
			require.Equal(t, padded(rows, len(schema.Dims)), runRows(t, schema, got), name)
		}
	}
}

// runRows reads a run back.
func runRows(t *testing.T, schema domain.Schema, run []byte) []domain.Row {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chunk.run")
	require.NoError(t, os.WriteFile(path, run, 0o600))
	got, rows, err := ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, schema, got)
	return rows
}

func TestWriteColumnsRefusesWhatDoesNotFit(t *testing.T) {
	schema := everyType()
	rng := rand.New(rand.NewPCG(1, 38))
	c := randomChunk(t, rng, schema, 2, 10)
	order := c.Sort([]domain.ColumnType{domain.TypeString, domain.TypeLong}, true)

	narrow := domain.Schema{Dims: schema.Dims[:1], Metrics: schema.Metrics}
	_, err := writeColumnsErr(narrow, c, order)
	require.ErrorContains(t, err, "2 dimension and 4 metric values, want at most 1 and 4")
	fewer := domain.Schema{Dims: schema.Dims, Metrics: schema.Metrics[:3]}
	_, err = writeColumnsErr(fewer, c, order)
	require.ErrorContains(t, err, "want at most 4 and 3")
	_, err = writeColumnsErr(schema, c, []int32{0, 10})
	require.ErrorContains(t, err, "row 1: index 10 outside the chunk's 10 rows")
	_, err = writeColumnsErr(schema, c, []int32{-1})
	require.ErrorContains(t, err, "row 0: index -1")

	w, err := NewRunWriter(discard{}, schema)
	require.NoError(t, err)
	_, err = w.Close()
	require.NoError(t, err)
	require.ErrorContains(t, w.WriteColumns(c, order), "closed")
}

func writeColumnsErr(schema domain.Schema, c *columns.Chunk, order []int32) (Info, error) {
	w, err := NewRunWriter(discard{}, schema)
	if err != nil {
		return Info{}, err
	}
	if err := w.WriteColumns(c, order); err != nil {
		return Info{}, err
	}
	return w.Close()
}

// BenchmarkWriteRunColumns writes a staging run of 100,000 rows shaped as
// the bench's backlog (five string dimensions of 1,000, 8, 30, 3 and 5
// values, three long metrics, rollup off), from columns (WriteColumns)
// and, for comparison, from the rows RowsIn makes of them (rows: RowsIn
// and Write, as staging was).
func BenchmarkWriteRunColumns(b *testing.B) {
	schema := domain.Schema{
		Dims: []domain.Column{{Name: "page", Type: domain.TypeString}, {Name: "browser", Type: domain.TypeString},
			{Name: "country", Type: domain.TypeString}, {Name: "device", Type: domain.TypeString}, {Name: "action", Type: domain.TypeString}},
		Metrics: []domain.MetricSpec{countSpec, {Type: domain.MetricLongSum, Name: "delta", FieldName: "delta"}, bytesSpec},
	}
	rng := rand.New(rand.NewPCG(1, 38))
	skewed := func(n int, k float64) int { return min(int(float64(n)*math.Pow(rng.Float64(), k)), n-1) }
	card := []int{1000, 8, 30, 3, 5}
	c := columns.New(len(schema.Dims), schema.Metrics)
	var codes []uint32
	const n = 100_000
	for i := range n {
		r := domain.Row{Time: 1_700_000_000_000 + int64(i)*36, Dims: make([]domain.Value, len(card))}
		for d, k := range card {
			r.Dims[d] = str(fmt.Sprintf("v%d-%d", d, skewed(k, 4)))
		}
		codes = c.Codes(&r, codes)
		c.Append(r.Time, codes, []domain.Value{long(1), long(rng.Int64N(2001) - 1000), long(rng.Int64N(100_000))})
	}
	types := []domain.ColumnType{domain.TypeString, domain.TypeString, domain.TypeString, domain.TypeString, domain.TypeString}
	order := c.Sort(types, true)
	var buf bytes.Buffer
	run := func(write func(w *RunWriter) error) {
		buf.Reset()
		w, err := NewRunWriter(&buf, schema)
		if err != nil {
			b.Fatal(err)
		}
		if err := write(w); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("columns", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run(func(w *RunWriter) error { return w.WriteColumns(c, order) })
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
	})
	b.Run("rows", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run(func(w *RunWriter) error { return w.Write(c.RowsIn(order, nil)...) })
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
	})
}
