package parse_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

// The fuzz targets feed any bytes to parsers built for a range of specs.
// Whatever the input: no panic; a message either emits rows or fails with
// an *UnparseableError or *RejectedError (and emits nothing); an error
// says what is wrong, quotes the field it blames, and stays short however
// large the message; and parsing the same message again (with what the
// first parse discovered) gives the same answer. Seeds are in
// testdata/fuzz/<target>/ besides the ones added here.

// maxErrorLen bounds an error's text: parse errors are logged, saved in
// parse_errors and shown by the CLI, so they must not echo a huge message.
const maxErrorLen = 1024

var fuzzMetrics = []domain.MetricSpec{
	{Type: domain.MetricCount, Name: "rows"},
	{Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"},
	{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"},
}

// fuzzSchemas are a declared schema (with a long dimension) and a
// discovering one, both with every kind of metric and an hourly query
// granularity.
func fuzzSchemas() (declared, discovered domain.DataSchema) {
	declared = schema("auto", domain.GranularityHour, "page", "user")
	declared.DimensionsSpec.Dimensions = append(declared.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "n", Type: domain.TypeLong})
	declared.MetricsSpec = fuzzMetrics
	discovered = schema("auto", domain.GranularityHour)
	discovered.MetricsSpec = fuzzMetrics
	return declared, discovered
}

type fuzzSpec struct {
	name string
	ds   domain.DataSchema
	io   domain.IOConfig
}

// withFormats repeats each spec for every kind of timestamp format.
func withFormats(specs ...fuzzSpec) []fuzzSpec {
	var out []fuzzSpec
	for _, s := range specs {
		for _, format := range []string{"auto", "iso", "millis", "seconds", "2006-01-02"} {
			s := s
			s.ds.TimestampSpec.Format = format
			s.name = s.name + "/" + format
			out = append(out, s)
		}
	}
	return out
}

func jsonFuzzSpecs() []fuzzSpec {
	declared, discovered := fuzzSchemas()
	flat := jsonIO()
	flat.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{
		{Type: "path", Name: "uid", Expr: "$.user.id"}, {Type: "path", Name: "tag", Expr: "$.user.tags[0]"},
		{Type: "root", Name: "page"},
	}}
	filtered := declared
	filtered.Filter = &domain.Filter{Type: "selector", Dimension: "page", Value: "Main"}
	late := jsonIO()
	late.LateMessageRejectionPeriod = domain.Duration(time.Hour)
	late.EarlyMessageRejectionPeriod = domain.Duration(time.Hour)
	return withFormats(
		fuzzSpec{"declared", declared, jsonIO()},
		fuzzSpec{"discovered", discovered, jsonIO()},
		fuzzSpec{"flattened", discovered, flat},
		fuzzSpec{"filtered", filtered, late},
	)
}

func csvFuzzSpecs() []fuzzSpec {
	declared, discovered := fuzzSchemas()
	cols := []string{"ts", "page", "user", "n", "bytes"}
	return withFormats(
		fuzzSpec{"comma", declared, csvIO(",", false, cols...)},
		fuzzSpec{"header", discovered, csvIO(",", true)},
		fuzzSpec{"semicolon", declared, csvIO(";", false, cols...)},
		fuzzSpec{"tab header", discovered, csvIO("\t", true)},
		fuzzSpec{"multibyte", discovered, csvIO("¦", true)},
	)
}

// Seeds of both targets: each format's messages are fed to the other's
// parsers too.
var (
	jsonSeeds = []string{
		`{"ts": 1709210096789, "page": "Main", "user": "bob", "n": 3, "bytes": 10}`,
		`{"ts": "2024-02-29T12:34:56.789Z", "page": null, "user": {"id": 7, "tags": ["a", 1]}}`,
		`{"ts": "2024-02-29", "page": [1, 2], "user": true, "bytes": "12"}`,
		`{"ts": "1709210096789", "page": "é\"\\", "n": "x"}`,
		`{"ts": -1e15}`,
		`{"ts": 1e300}`,
		`{"page": "no ts"}`,
		`{}`,
		`null`,
		`[1, 2]`,
		`"str"`,
		`{"ts": 1,`,
		``,
	}
	csvSeeds = []string{
		"1709210096789,Main,bob,3,10\n1709210096790,\"a,b\",,,",
		"ts,page\n1,a",
		"ts,page,ts\n1,a,2",
		"ts;page;user;n;bytes\n1709210096789;Main;bob;3;10",
		"ts\tpage\n2024-02-29\t\"x\ty\"",
	}
)

func FuzzParseJSON(f *testing.F) { fuzzParse(f, jsonFuzzSpecs(), jsonSeeds, csvSeeds) }

func FuzzParseCSV(f *testing.F) { fuzzParse(f, csvFuzzSpecs(), csvSeeds, jsonSeeds) }

func fuzzParse(f *testing.F, specs []fuzzSpec, seeds ...[]string) {
	for _, ss := range seeds {
		for _, seed := range ss {
			f.Add([]byte(seed))
		}
	}
	// Every spec must make a parser; the parsers themselves are made for
	// each input, so that a failure replays from the input alone.
	for _, s := range specs {
		mustNew(f, s.ds, s.io)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, s := range specs {
			p, err := parse.New(s.ds, s.io)
			if err != nil {
				t.Fatalf("%s: New: %v", s.name, err)
			}
			rows, err := checkParse(t, s.name, p, msg)
			again, errAgain := checkParse(t, s.name, p, msg)
			if fmt.Sprint(err) != fmt.Sprint(errAgain) || !reflect.DeepEqual(rows, again) {
				t.Fatalf("%s: Parse(%q) twice: %v, %+v, then %v, %+v", s.name, msg, err, rows, errAgain, again)
			}
			// The view path (ParseRecordView) of a parser of its own: the
			// same rows and error, its rows copied while they are valid,
			// and the parser as good for Parse afterwards.
			v, _ := parse.New(s.ds, s.io)
			views, errView := viewParse(v, msg)
			if fmt.Sprint(err) != fmt.Sprint(errView) || !reflect.DeepEqual(rows, views) {
				t.Fatalf("%s: ParseRecordView(%q) = %v, %+v, Parse: %v, %+v", s.name, msg, errView, views, err, rows)
			}
			after, errAfter := checkParse(t, s.name, v, msg)
			if fmt.Sprint(err) != fmt.Sprint(errAfter) || !reflect.DeepEqual(rows, after) {
				t.Fatalf("%s: Parse(%q) after ParseRecordView: %v, %+v, want %v, %+v", s.name, msg, errAfter, after, err, rows)
			}
		}
	})
}

// viewParse parses msg through ParseRecordView, copying each row (its
// strings too) while it is valid.
func viewParse(p *parse.Parser, msg []byte) ([]domain.Row, error) {
	var rows []domain.Row
	own := func(vs []domain.Value) []domain.Value {
		out := make([]domain.Value, len(vs))
		for i, v := range vs {
			v.S = strings.Clone(v.S)
			out[i] = v
		}
		return out
	}
	err := p.ParseRecordView(&parse.Record{Value: msg}, now, func(r *domain.Row) {
		rows = append(rows, domain.Row{Time: r.Time, Dims: own(r.Dims), Metrics: own(r.Metrics)})
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// checkParse parses msg and checks what every parse must hold.
func checkParse(t *testing.T, name string, p *parse.Parser, msg []byte) ([]domain.Row, error) {
	t.Helper()
	var rows []domain.Row
	err := p.Parse(msg, now, func(r domain.Row) { rows = append(rows, r) })
	if err != nil {
		checkParseError(t, name, msg, err)
		if rows != nil {
			t.Fatalf("%s: Parse(%q) emitted rows and failed: %v", name, msg, err)
		}
		return nil, err
	}
	if len(rows) == 0 {
		t.Fatalf("%s: Parse(%q) emitted nothing and did not fail", name, msg)
	}
	schema := p.Schema()
	for _, row := range rows {
		if len(row.Metrics) != len(fuzzMetrics) {
			t.Fatalf("%s: Parse(%q) = %+v: %d metrics, want %d", name, msg, row, len(row.Metrics), len(fuzzMetrics))
		}
		if len(row.Dims) > len(schema.Dims) {
			t.Fatalf("%s: Parse(%q) = %+v: more dims than the schema's %d", name, msg, row, len(schema.Dims))
		}
		if row.Time%int64(time.Hour/time.Millisecond) != 0 {
			t.Fatalf("%s: Parse(%q) time %d is not truncated to the hour", name, msg, row.Time)
		}
	}
	return rows, nil
}

// checkParseError checks that err is a parse error saying what is wrong.
func checkParseError(t *testing.T, name string, msg []byte, err error) {
	t.Helper()
	var bad *parse.UnparseableError
	var rejected *parse.RejectedError
	switch {
	case errors.As(err, &bad):
		if bad.Msg == "" {
			t.Fatalf("%s: Parse(%q): an UnparseableError without a message", name, msg)
		}
		if bad.Field != "" && !strings.Contains(bad.Msg, fmt.Sprintf("%q", bad.Field)) {
			t.Fatalf("%s: Parse(%q): error %q blames field %q without naming it", name, msg, bad.Msg, bad.Field)
		}
		if bad.Line < 0 {
			t.Fatalf("%s: Parse(%q): error %q on line %d", name, msg, bad.Msg, bad.Line)
		}
	case errors.As(err, &rejected):
		switch rejected.Reason {
		case parse.ReasonLate, parse.ReasonEarly, parse.ReasonFiltered:
		default:
			t.Fatalf("%s: Parse(%q): rejected for reason %q", name, msg, rejected.Reason)
		}
		if rejected.Detail == "" {
			t.Fatalf("%s: Parse(%q): rejected (%s) without a detail", name, msg, rejected.Reason)
		}
	default:
		t.Fatalf("%s: Parse(%q): %T %v, want *UnparseableError or *RejectedError", name, msg, err, err)
	}
	if n := len(err.Error()); n > maxErrorLen {
		t.Fatalf("%s: Parse(%d bytes): error of %d bytes, want at most %d: %.200q...", name, len(msg), n, maxErrorLen, err.Error())
	}
}
