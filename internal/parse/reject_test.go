package parse_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

func TestParseRejects(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) string { return itoa(int(now.Add(d).UnixMilli())) }
	sel := func(dim, value string) *domain.Filter {
		return &domain.Filter{Type: "selector", Dimension: dim, Value: value}
	}
	tests := []struct {
		name        string
		late, early time.Duration
		filter      *domain.Filter
		msg         string
		reason      string // "" keeps the row
	}{
		{"late", time.Hour, 0, nil, `{"ts": ` + at(-time.Hour-time.Millisecond) + `}`, parse.ReasonLate},
		{"late boundary kept", time.Hour, 0, nil, `{"ts": ` + at(-time.Hour) + `}`, ""},
		{"late off", 0, 0, nil, `{"ts": 0}`, ""},
		// The untruncated time counts: 12:39:59.999 truncates to 12:00 (more
		// than 10m before now) but is itself within the period.
		{"late uses the untruncated time", 10 * time.Minute, 0, nil, `{"ts": ` + at(-time.Millisecond) + `}`, ""},
		{"early", 0, time.Minute, nil, `{"ts": ` + at(time.Minute+time.Millisecond) + `}`, parse.ReasonEarly},
		{"early boundary kept", 0, time.Minute, nil, `{"ts": ` + at(time.Minute) + `}`, ""},
		{"early off", 0, 0, nil, `{"ts": 99999999999999}`, ""},
		{"filter keeps", 0, 0, sel("page", "Main"), `{"ts": 1, "page": "Main"}`, ""},
		{"filter drops", 0, 0, sel("page", "Main"), `{"ts": 1, "page": "Other"}`, parse.ReasonFiltered},
		{"filter on a missing dim", 0, 0, sel("page", "Main"), `{"ts": 1}`, parse.ReasonFiltered},
		{"filter for empty keeps missing", 0, 0, sel("page", ""), `{"ts": 1}`, ""},
		{"filter for empty keeps null", 0, 0, sel("page", ""), `{"ts": 1, "page": null}`, ""},
		{"filter for empty keeps empty", 0, 0, sel("page", ""), `{"ts": 1, "page": ""}`, ""},
		{"filter for empty drops a value", 0, 0, sel("page", ""), `{"ts": 1, "page": "x"}`, parse.ReasonFiltered},
		{"filter on a long dim", 0, 0, sel("n", "7"), `{"ts": 1, "n": "007"}`, ""},
		{"filter on a double dim", 0, 0, sel("x", "2.5"), `{"ts": 1, "x": 2.50}`, ""},
		{"filter on a number as text", 0, 0, sel("page", "12.50"), `{"ts": 1, "page": 12.50}`, ""},
		{"filter on a field not a dimension", 0, 0, sel("env", "prod"), `{"ts": 1, "env": "prod"}`, ""},
		{"filter on a field not a dimension drops", 0, 0, sel("env", "prod"), `{"ts": 1, "env": "dev"}`, parse.ReasonFiltered},
		{"late before filter", time.Hour, 0, sel("page", "Main"), `{"ts": 0, "page": "x"}`, parse.ReasonLate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ds := schema("millis", domain.GranularityHour, "page")
			ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions,
				domain.DimensionSpec{Name: "n", Type: domain.TypeLong}, domain.DimensionSpec{Name: "x", Type: domain.TypeDouble})
			ds.Filter = tt.filter
			io := jsonIO()
			io.LateMessageRejectionPeriod, io.EarlyMessageRejectionPeriod = domain.Duration(tt.late), domain.Duration(tt.early)
			p := mustNew(t, ds, io)
			rows, err := parseRows(p, tt.msg)
			if tt.reason == "" {
				require.NoError(t, err)
				require.Len(t, rows, 1)
				return
			}
			require.Empty(t, rows)
			var rejected *parse.RejectedError
			require.ErrorAs(t, err, &rejected)
			require.Equal(t, tt.reason, rejected.Reason)
			require.Contains(t, err.Error(), tt.reason)
		})
	}
}

// A message is all or nothing: one row thrown away throws the message
// away; a bad row anywhere makes it unparseable, even after a rejection.
func TestParseCSVMessageIsAllOrNothing(t *testing.T) {
	t.Parallel()
	ds := schema("millis", domain.GranularityNone, "page")
	ds.Filter = &domain.Filter{Type: "selector", Dimension: "page", Value: "keep"}
	p := mustNew(t, ds, csvIO(",", false, "ts", "page"))

	rows, err := parseRows(p, "1,keep\n2,drop\n3,keep")
	require.Empty(t, rows)
	var rejected *parse.RejectedError
	require.ErrorAs(t, err, &rejected)
	require.Equal(t, parse.ReasonFiltered, rejected.Reason)

	bad := unparseable(t, p, "1,drop\n2,keep\nx,keep")
	require.Equal(t, 3, bad.Line)

	rows, err = parseRows(p, "1,keep\n2,keep")
	require.NoError(t, err)
	require.Len(t, rows, 2)
}
