package parse_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// Rows belong to the caller once emitted (the rollup buffer keeps them
// until its chunk is written): however many rows follow, the cells of a
// held row (carved from a shared slab with rollup off) and its strings
// (interned, or copied) never change. Later messages use other values, so
// that a slab or an intern table handing out memory twice would show.
func TestHeldRowsKeepTheirValues(t *testing.T) {
	const held, after = 3000, 20_000
	for _, rollup := range []bool{false, true} {
		t.Run(fmt.Sprint("rollup=", rollup), func(t *testing.T) {
			ds := schema("iso", "", "page", "country", "id")
			ds.GranularitySpec.Rollup = &rollup
			ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricLongSum, Name: "n", FieldName: "n"}}
			p := mustNew(t, ds, jsonIO())
			msg := func(i int, page, country string) []byte {
				return fmt.Appendf(nil, `{"ts":"2024-02-29T12:34:56.789Z","page":%q,"country":%q,"id":"id%d","n":%d}`, page, country, i, i)
			}
			want := func(i int, page, country string) domain.Row {
				return domain.Row{Time: leapMillis, Dims: []domain.Value{sv(page), sv(country), sv(fmt.Sprint("id", i))}, Metrics: []domain.Value{lv(int64(i))}}
			}
			var rows, wantRows []domain.Row
			for i := range held {
				page, country := fmt.Sprint("P", i%700), []string{"US", "FR", "JP"}[i%3]
				buf := msg(i, page, country)
				require.NoError(t, p.Parse(buf, now, func(r domain.Row) { rows = append(rows, r) }))
				clear(buf)
				wantRows = append(wantRows, want(i, page, country))
			}
			for i := range after {
				require.NoError(t, p.Parse(msg(held+i, fmt.Sprint("Q", i), "XX"), now, func(domain.Row) {}))
			}
			require.Equal(t, wantRows, rows)
		})
	}
}
