package parse_test

import (
	"errors"
	"testing"
	"time"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
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
		"1709210096789,Main,bob,3,10\n1709210096790,\"a,b\",,,",
		"ts,page\n1,a",
	} {
		f.Add([]byte(seed))
	}
	metrics := []domain.MetricSpec{
		{Type: domain.MetricCount, Name: "rows"},
		{Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"},
		{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"},
	}
	declared := schema("auto", domain.GranularityHour, "page", "user")
	declared.DimensionsSpec.Dimensions = append(declared.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "n", Type: domain.TypeLong})
	declared.MetricsSpec = metrics
	discovered := schema("auto", domain.GranularityHour)
	discovered.MetricsSpec = metrics
	flat := jsonIO()
	flat.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{
		{Type: "path", Name: "uid", Expr: "$.user.id"}, {Type: "path", Name: "tag", Expr: "$.user.tags[0]"},
	}}
	var parsers []*parse.Parser
	for _, c := range []struct {
		ds domain.DataSchema
		io domain.IOConfig
	}{
		{declared, jsonIO()}, {discovered, jsonIO()}, {discovered, flat},
		{declared, csvIO(",", false, "ts", "page", "user", "n", "bytes")}, {discovered, csvIO(",", true)},
	} {
		for _, format := range []string{"auto", "iso", "millis", "seconds", "2006-01-02"} {
			c.ds.TimestampSpec.Format = format
			parsers = append(parsers, mustNew(f, c.ds, c.io))
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		for i, p := range parsers {
			var rows []domain.Row
			err := p.Parse(msg, now, func(r domain.Row) { rows = append(rows, r) })
			if err != nil {
				var bad *parse.UnparseableError
				var rejected *parse.RejectedError
				if !errors.As(err, &bad) && !errors.As(err, &rejected) {
					t.Fatalf("parser %d: Parse(%q): %T %v, want *UnparseableError or *RejectedError", i, msg, err, err)
				}
				if rows != nil {
					t.Fatalf("parser %d: Parse(%q) emitted rows and failed: %v", i, msg, err)
				}
				continue
			}
			if len(rows) == 0 {
				t.Fatalf("parser %d: Parse(%q) emitted nothing and did not fail", i, msg)
			}
			schema := p.Schema()
			for _, row := range rows {
				if len(row.Metrics) != len(metrics) {
					t.Fatalf("parser %d: Parse(%q) = %+v: %d metrics, want %d", i, msg, row, len(row.Metrics), len(metrics))
				}
				if len(row.Dims) > len(schema.Dims) {
					t.Fatalf("parser %d: Parse(%q) = %+v: more dims than the schema's %d", i, msg, row, len(schema.Dims))
				}
				if row.Time%int64(time.Hour/time.Millisecond) != 0 {
					t.Fatalf("parser %d: Parse(%q) time %d is not truncated to the hour", i, msg, row.Time)
				}
			}
		}
	})
}
