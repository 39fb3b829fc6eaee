package parse

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// A dimension with a new value in every row does not grow the intern map
// past maxInterned, and the values interned before it filled (a
// low-cardinality dimension's) are still shared, not copied per row.
func TestInternedValuesStayBounded(t *testing.T) {
	off := false
	p, err := New(domain.DataSchema{
		DataSource:      "ds",
		TimestampSpec:   domain.TimestampSpec{Column: "ts", Format: "millis"},
		DimensionsSpec:  domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{{Name: "id"}, {Name: "country"}}},
		GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, Rollup: &off},
	}, domain.IOConfig{Topic: "t"})
	require.NoError(t, err)
	now := time.UnixMilli(1709210096789)
	var rows []domain.Row
	for i := range 3 * maxInterned {
		msg := fmt.Appendf(nil, `{"ts":1709210096789,"id":"e%d","country":%q}`, i, []string{"US", "FR"}[i%2])
		require.NoError(t, p.Parse(msg, now, func(r domain.Row) { rows = append(rows, r) }))
	}
	require.LessOrEqual(t, len(p.interned), maxInterned)
	last := rows[len(rows)-1]
	require.Equal(t, fmt.Sprint("e", 3*maxInterned-1), last.Dims[0].S)
	require.Same(t, unsafe.StringData(rows[1].Dims[1].S), unsafe.StringData(last.Dims[1].S), "a country copied per row")
}
