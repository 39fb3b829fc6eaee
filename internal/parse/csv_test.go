package parse_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestParseCSV(t *testing.T) {
	t.Parallel()
	ds := schema("millis", domain.GranularityNone, "page", "user")
	ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "n", Type: domain.TypeLong})
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "bytes", FieldName: "b"}}
	tests := []struct {
		name string
		io   domain.IOConfig
		msg  string
		want []domain.Row
	}{
		{"one line", csvIO(",", false, "ts", "page", "user", "n", "b"), "1,Main,bob,7,10",
			[]domain.Row{{Time: 1, Dims: []domain.Value{sv("Main"), sv("bob"), lv(7)}, Metrics: []domain.Value{lv(1), lv(10)}}}},
		{"quotes", csvIO(",", false, "ts", "page", "user", "n", "b"), `2,"Main, Page","say ""hi""",,"5"`,
			[]domain.Row{{Time: 2, Dims: []domain.Value{sv("Main, Page"), sv(`say "hi"`), null}, Metrics: []domain.Value{lv(1), lv(5)}}}},
		{"quoted line break", csvIO(",", false, "ts", "page", "user", "n", "b"), "3,\"two\nlines\",x,1,1",
			[]domain.Row{{Time: 3, Dims: []domain.Value{sv("two\nlines"), sv("x"), lv(1)}, Metrics: []domain.Value{lv(1), lv(1)}}}},
		{"empty cells are null", csvIO(",", false, "ts", "page", "user", "n", "b"), "4,,,,",
			[]domain.Row{{Time: 4, Dims: []domain.Value{null, null, null}, Metrics: []domain.Value{lv(1), null}}}},
		{"delimiter ;", csvIO(";", false, "ts", "page", "user", "n", "b"), "5;a,b;c;-2;0",
			[]domain.Row{{Time: 5, Dims: []domain.Value{sv("a,b"), sv("c"), lv(-2)}, Metrics: []domain.Value{lv(1), lv(0)}}}},
		{"tab and unicode delimiter", csvIO("¦", false, "ts", "page", "user", "n", "b"), "6¦a\tb¦c¦1¦1",
			[]domain.Row{{Time: 6, Dims: []domain.Value{sv("a\tb"), sv("c"), lv(1)}, Metrics: []domain.Value{lv(1), lv(1)}}}},
		{"default delimiter", csvIO("", false, "ts", "page", "user", "n", "b"), "7,a,b,1,1",
			[]domain.Row{{Time: 7, Dims: []domain.Value{sv("a"), sv("b"), lv(1)}, Metrics: []domain.Value{lv(1), lv(1)}}}},
		{"several lines, blank ones skipped, CRLF", csvIO(",", false, "ts", "page", "user", "n", "b"), "1,a,,,\r\n\r\n2,b,,,\n\n",
			[]domain.Row{
				{Time: 1, Dims: []domain.Value{sv("a"), null, null}, Metrics: []domain.Value{lv(1), null}},
				{Time: 2, Dims: []domain.Value{sv("b"), null, null}, Metrics: []domain.Value{lv(1), null}},
			}},
		{"header", csvIO(",", true), "user,b,ts,extra\nbob,3,8,x\nann,4,9,y\n",
			[]domain.Row{
				{Time: 8, Dims: []domain.Value{null, sv("bob"), null}, Metrics: []domain.Value{lv(1), lv(3)}},
				{Time: 9, Dims: []domain.Value{null, sv("ann"), null}, Metrics: []domain.Value{lv(1), lv(4)}},
			}},
		{"header with ;", csvIO(";", true), "ts;page\n10;x",
			[]domain.Row{{Time: 10, Dims: []domain.Value{sv("x"), null, null}, Metrics: []domain.Value{lv(1), null}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, ds, tt.io)
			rows, err := parseRows(p, tt.msg)
			require.NoError(t, err)
			require.Equal(t, tt.want, rows)
		})
	}
}

func TestParseCSVErrors(t *testing.T) {
	t.Parallel()
	ds := schema("millis", domain.GranularityNone, "page")
	ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "n", Type: domain.TypeLong})
	cols := csvIO(",", false, "ts", "page", "n")
	tests := []struct {
		name string
		io   domain.IOConfig
		msg  string
		line int
		want string
	}{
		{"too few fields", cols, "1,a", 1, "2 fields: want 3"},
		{"too many fields, later line", cols, "1,a,1\n2,b,2\n3,c,3,4", 3, "4 fields: want 3"},
		{"bare quote", cols, "1,a\"b,1", 1, "bare \" in non-quoted-field"},
		{"unclosed quote", cols, "1,\"a,1\n2,b,2", 1, "extraneous or missing \" in quoted-field"},
		{"bad value on line 2: nothing emitted", cols, "1,a,1\n2,b,x", 2, `dimension "n": want a whole number, got the string "x"`},
		{"bad timestamp", cols, "1,a,1\n\nnope,b,2", 3, `timestamp column "ts"`},
		{"empty", cols, "", 0, "empty message"},
		{"blank lines only", cols, "\n\r\n", 0, "empty message"},
		{"header: wrong field count", csvIO(",", true), "ts,page\n1,a\n2", 3, "1 fields: want 2"},
		{"header only", csvIO(",", true), "ts,page\n", 0, "no rows after the header"},
		{"header repeats a name", csvIO(",", true), "ts,page,page\n1,a,b", 1, `header column 3 is "page"`},
		{"header with an empty name", csvIO(",", true), "ts,,n\n1,a,b", 1, `header column 2 is ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, ds, tt.io)
			bad := unparseable(t, p, tt.msg)
			require.Equal(t, tt.line, bad.Line)
			require.Contains(t, bad.Error(), tt.want)
			if tt.line > 0 {
				require.Contains(t, bad.Error(), "line "+itoa(tt.line)+": ")
			}
		})
	}
}

func TestParseCSVDiscovery(t *testing.T) {
	t.Parallel()
	ds := schema("millis", domain.GranularityNone)
	ds.DimensionsSpec.DimensionExclusions = []string{"skip"}
	p := mustNew(t, ds, csvIO(",", true))
	rows, err := parseRows(p, "ts,b,skip,a\n1,x,y,\n")
	require.NoError(t, err)
	require.Equal(t, []domain.Value{sv("x")}, rows[0].Dims, "rows end at their last value")
	rows, err = parseRows(p, "c,a,ts\nz,w,2\n")
	require.NoError(t, err)
	require.Equal(t, []string{"b", "a", "c"}, names(p.Schema()))
	require.Equal(t, []domain.Value{null, sv("w"), sv("z")}, rows[0].Dims)
}
