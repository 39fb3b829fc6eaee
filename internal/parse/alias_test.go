package parse_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

// Parse reads the message in place; the rows it emits must not change when
// the caller reuses the message's bytes afterwards: every string a row
// keeps (short and interned, long and copied, discovered names) is its own.
func TestRowsOutliveTheMessageBytes(t *testing.T) {
	long := strings.Repeat("p", 200)
	msg := `{"ts":"2024-02-29T12:34:56.789Z","page":"` + long + `","user":"ann","extra":"e1"}`
	for _, ds := range []domain.DataSchema{
		schema("iso", "", "page", "user"),
		schema("iso", ""), // discovery: dimension names come from the message too
	} {
		p, err := parse.New(ds, domain.IOConfig{Topic: "t"})
		require.NoError(t, err)
		buf := []byte(msg)
		var rows []domain.Row
		require.NoError(t, p.Parse(buf, now, func(r domain.Row) { rows = append(rows, r) }))
		for i := range buf {
			buf[i] = 'X'
		}
		require.Len(t, rows, 1)
		got := map[string]string{}
		for i, c := range p.Schema().Dims {
			if i < len(rows[0].Dims) && !rows[0].Dims[i].Null {
				got[c.Name] = rows[0].Dims[i].S
			}
		}
		require.Equal(t, long, got["page"])
		require.Equal(t, "ann", got["user"])
		for _, c := range p.Schema().Dims {
			require.NotContains(t, c.Name, "X", "a discovered name aliases the message")
		}
	}
}
