package segment

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

var (
	countSpec = domain.MetricSpec{Type: domain.MetricCount, Name: "count"}
	bytesSpec = domain.MetricSpec{Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}
	ratioSpec = domain.MetricSpec{Type: domain.MetricDoubleMax, Name: "max_ratio", FieldName: "ratio"}
	usersSpec = domain.MetricSpec{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"}
)

// everyType has a column of each type, named so that alphabetical order
// differs from the schema's.
func everyType() domain.Schema {
	return domain.Schema{
		Dims: []domain.Column{
			{Name: "zeta", Type: domain.TypeString},
			{Name: "Alpha", Type: domain.TypeLong},
			{Name: "ünïcode", Type: domain.TypeDouble},
			{Name: "mid", Type: domain.TypeString},
		},
		Metrics: []domain.MetricSpec{countSpec, bytesSpec, ratioSpec, usersSpec},
	}
}

func str(s string) domain.Value             { return domain.StringValue(s) }
func long(n int64) domain.Value             { return domain.LongValue(n) }
func dbl(f float64) domain.Value            { return domain.DoubleValue(f) }
func null() domain.Value                    { return domain.NullValue() }
func vals(v ...domain.Value) []domain.Value { return v }

// sketch is a hyperUnique value over the given users.
func sketch(t testing.TB, users ...string) domain.Value {
	t.Helper()
	var acc domain.Value = null()
	for _, u := range users {
		v, err := aggregate.Init(usersSpec, u, true)
		require.NoError(t, err)
		acc, err = aggregate.Combine(usersSpec, acc, v)
		require.NoError(t, err)
	}
	return acc
}

// padded is rows as a reader returns them: one value per schema dimension.
func padded(rows []domain.Row, numDims int) []domain.Row {
	out := make([]domain.Row, len(rows))
	for i, r := range rows {
		out[i] = domain.Row{Time: r.Time, Metrics: r.Metrics}
		if numDims > 0 {
			out[i].Dims = make([]domain.Value, numDims)
			for d := range numDims {
				out[i].Dims[d] = r.Dim(d)
			}
		}
	}
	return out
}

// benchSchema is a typical rolled-up datasource: five string dimensions,
// a long one, and count, longSum and doubleMax metrics.
func benchSchema() domain.Schema {
	return domain.Schema{
		Dims: []domain.Column{
			{Name: "country", Type: domain.TypeString},
			{Name: "device", Type: domain.TypeString},
			{Name: "os", Type: domain.TypeString},
			{Name: "campaign", Type: domain.TypeString},
			{Name: "page", Type: domain.TypeString},
			{Name: "status", Type: domain.TypeLong},
		},
		Metrics: []domain.MetricSpec{countSpec, bytesSpec, ratioSpec},
	}
}

// makeRows makes n sorted rows of benchSchema, ten per second from start;
// seed varies the dimension values.
func makeRows(n int, start int64, seed uint64) []domain.Row {
	s := benchSchema()
	rng := rand.New(rand.NewPCG(seed, 42))
	rows := make([]domain.Row, n)
	cells := make([]domain.Value, n*(len(s.Dims)+len(s.Metrics)))
	for i := range rows {
		c := cells[i*9 : (i+1)*9 : (i+1)*9]
		for d := range 5 {
			c[d] = str(dimValues[d][rng.IntN(len(dimValues[d]))])
		}
		c[5] = long(int64(200 + rng.IntN(4)*100))
		c[6], c[7], c[8] = long(1), long(rng.Int64N(1<<20)), dbl(rng.Float64())
		rows[i] = domain.Row{Time: start + int64(i/10)*1000, Dims: c[:6], Metrics: c[6:]}
	}
	sortRows(rows, s.Dims)
	return rows
}

// dimValues are the values of makeRows's string dimensions: 7, 14, 21,
// 28 and 35 of them.
var dimValues = func() [5][]string {
	var vs [5][]string
	for d := range vs {
		for v := range 7 * (d + 1) {
			vs[d] = append(vs[d], fmt.Sprintf("d%d-v%d", d, v))
		}
	}
	return vs
}()

func sortRows(rows []domain.Row, dims []domain.Column) {
	slices.SortStableFunc(rows, func(a, b domain.Row) int { return domain.CompareRows(a, b, dims) })
}

func writeSegment(t testing.TB, dir, name string, schema domain.Schema, rows []domain.Row) string {
	t.Helper()
	path := filepath.Join(dir, name)
	_, err := WriteFile(path, schema, rows)
	require.NoError(t, err)
	return path
}

// cloneRow copies r's cells, which Merge reuses after emit returns.
func cloneRow(r domain.Row) domain.Row {
	if r.Dims != nil {
		r.Dims = append(r.Dims[:0:0], r.Dims...)
	}
	if r.Metrics != nil {
		r.Metrics = append(r.Metrics[:0:0], r.Metrics...)
	}
	return r
}
