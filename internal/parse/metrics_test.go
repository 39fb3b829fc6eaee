package parse_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

func TestParseMetrics(t *testing.T) {
	t.Parallel()
	hll := domain.MetricSpec{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"}
	ds := schema("millis", domain.GranularityNone, "page")
	ds.MetricsSpec = []domain.MetricSpec{
		{Type: domain.MetricCount, Name: "rows"},
		{Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"},
		{Type: domain.MetricDoubleSum, Name: "sum_price", FieldName: "price"},
		hll,
	}
	sketch, err := aggregate.Init(hll, "bob", true)
	require.NoError(t, err)
	tests := []struct {
		name string
		msg  string
		want []domain.Value
	}{
		{"numbers", `{"ts": 1, "bytes": 42, "price": 1.5, "user": "bob"}`, []domain.Value{lv(1), lv(42), dv(1.5), sketch}},
		{"numeric strings", `{"ts": 1, "bytes": "42", "price": "1.5", "user": "bob"}`, []domain.Value{lv(1), lv(42), dv(1.5), sketch}},
		{"integral float to a long", `{"ts": 1, "bytes": 42.0, "user": "bob"}`, []domain.Value{lv(1), lv(42), null, sketch}},
		{"missing and null", `{"ts": 1, "bytes": null}`, []domain.Value{lv(1), null, null, null}},
		{"field used as dimension too", `{"ts": 1, "page": "p", "bytes": 1, "price": 0, "user": "bob"}`, []domain.Value{lv(1), lv(1), dv(0), sketch}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, ds, jsonIO())
			row := parseOne(t, p, tt.msg)
			require.Equal(t, tt.want, row.Metrics)
			require.Equal(t, ds.MetricsSpec, p.Schema().Metrics)
		})
	}
}

func TestParseMetricErrors(t *testing.T) {
	t.Parallel()
	ds := schema("millis", domain.GranularityNone)
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}}
	for _, value := range []string{`"abc"`, `1.5`, `true`, `{"n": 1}`, `[1]`, `""`} {
		t.Run(value, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, ds, jsonIO())
			bad := unparseable(t, p, `{"ts": 1, "bytes": `+value+`}`)
			require.Equal(t, "bytes", bad.Field)
			require.Contains(t, bad.Error(), `metric "sum_bytes"`)
			require.Contains(t, bad.Error(), `"bytes"`)
			require.Empty(t, p.Schema().Dims, "nothing discovered")
		})
	}
}
