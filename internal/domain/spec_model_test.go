package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestDimensionsTakeNamesOrTypedObjects(t *testing.T) {
	t.Parallel()
	m := specMap(t)
	set(m, "dataSchema.dimensionsSpec.dimensions", []any{"page", map[string]any{"name": "bytes", "type": "long"}, map[string]any{"name": "score", "type": "double"}})
	set(m, "dataSchema.metricsSpec", []any{
		map[string]any{"type": "count", "name": "n"},
		map[string]any{"type": "longSum", "name": "added", "fieldName": "delta"},
		map[string]any{"type": "hyperUnique", "name": "users", "fieldName": "user"},
	})
	s, err := domain.ParseSpec(mustJSON(t, m))
	require.NoError(t, err)
	require.Equal(t, domain.Schema{
		Dims: []domain.Column{{Name: "page", Type: domain.TypeString}, {Name: "bytes", Type: domain.TypeLong}, {Name: "score", Type: domain.TypeDouble}},
		Metrics: []domain.MetricSpec{
			{Type: "count", Name: "n"}, {Type: "longSum", Name: "added", FieldName: "delta"}, {Type: "hyperUnique", Name: "users", FieldName: "user"},
		},
	}, s.DataSchema.DeclaredSchema())
	require.Equal(t, []domain.Column{
		{Name: "page", Type: domain.TypeString}, {Name: "bytes", Type: domain.TypeLong}, {Name: "score", Type: domain.TypeDouble},
		{Name: "n", Type: domain.TypeLong}, {Name: "added", Type: domain.TypeLong}, {Name: "users", Type: domain.TypeSketch},
	}, s.DataSchema.DeclaredSchema().Columns())
	require.True(t, s.DataSchema.GranularitySpec.RollupOn(), "rollup is on by default")
	require.False(t, s.DataSchema.Discovers())
}

func TestNoDimensionsMeansDiscovery(t *testing.T) {
	t.Parallel()
	m := specMap(t)
	set(m, "dataSchema.dimensionsSpec.dimensions", nil)
	s, err := domain.ParseSpec(mustJSON(t, m))
	require.NoError(t, err)
	require.True(t, s.DataSchema.Discovers())
}

func TestDataModelErrorsNameTheField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path string
		v          any
		wantPath   string
	}{
		{"unknown dimension type", "dataSchema.dimensionsSpec.dimensions", []any{map[string]any{"name": "x", "type": "float"}}, "dataSchema.dimensionsSpec.dimensions[0].type"},
		{"unknown metric type", "dataSchema.metricsSpec", []any{map[string]any{"type": "avg", "name": "x", "fieldName": "y"}}, "dataSchema.metricsSpec[0].type"},
		{"metric without field", "dataSchema.metricsSpec", []any{map[string]any{"type": "longSum", "name": "x"}}, "dataSchema.metricsSpec[0].fieldName"},
		{"metric named like a dimension", "dataSchema.metricsSpec", []any{map[string]any{"type": "count", "name": "page"}}, "dataSchema.metricsSpec[0].name"},
		{"csv without columns", "ioConfig.inputFormat", map[string]any{"type": "csv"}, "ioConfig.inputFormat.columns"},
		{"csv with a long delimiter", "ioConfig.inputFormat", map[string]any{"type": "csv", "columns": []any{"a"}, "delimiter": "::"}, "ioConfig.inputFormat.delimiter"},
		{"unknown input format", "ioConfig.inputFormat", map[string]any{"type": "avro"}, "ioConfig.inputFormat.type"},
		{"bad flatten path", "ioConfig.inputFormat", map[string]any{"type": "json", "flattenSpec": map[string]any{"fields": []any{map[string]any{"type": "path", "name": "n", "expr": "user.name"}}}}, "ioConfig.inputFormat.flattenSpec.fields[0].expr"},
		{"filter type", "dataSchema.filter", map[string]any{"type": "regex", "dimension": "page", "value": "x"}, "dataSchema.filter.type"},
		{"negative parse exceptions", "tuningConfig.maxParseExceptions", -1, "tuningConfig.maxParseExceptions"},
		{"tiny bytes in memory", "tuningConfig.maxBytesInMemory", 1000, "tuningConfig.maxBytesInMemory"},
		{"dead letters to the input", "ioConfig.deadLetterTopic", "wikipedia", "ioConfig.deadLetterTopic"},
		{"bad timestamp layout", "dataSchema.timestampSpec.format", "dd/mm/yyyy", "dataSchema.timestampSpec.format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := specMap(t)
			set(m, tt.path, tt.v)
			_, err := domain.ParseSpec(mustJSON(t, m))
			var fe *domain.FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tt.wantPath, fe.Path, "%v", err)
		})
	}
}

func TestGoLayoutTimestampFormatIsAccepted(t *testing.T) {
	t.Parallel()
	m := specMap(t)
	set(m, "dataSchema.timestampSpec.format", "2006-01-02 15:04:05")
	_, err := domain.ParseSpec(mustJSON(t, m))
	require.NoError(t, err)
}

func TestCompareRowsOrdersByTimeThenTypedDims(t *testing.T) {
	t.Parallel()
	dims := []domain.Column{{Name: "s", Type: domain.TypeString}, {Name: "n", Type: domain.TypeLong}}
	row := func(ts int64, s string, n int64) domain.Row {
		return domain.Row{Time: ts, Dims: []domain.Value{domain.StringValue(s), domain.LongValue(n)}}
	}
	require.Negative(t, domain.CompareRows(row(1, "b", 9), row(2, "a", 0), dims))
	require.Negative(t, domain.CompareRows(row(1, "a", 9), row(1, "b", 0), dims))
	require.Negative(t, domain.CompareRows(row(1, "a", -5), row(1, "a", 3), dims), "longs compare as numbers")
	require.Negative(t, domain.CompareRows(domain.Row{Time: 1}, row(1, "", 0), dims), "null sorts first")
	require.Zero(t, domain.CompareRows(domain.Row{Time: 1, Dims: []domain.Value{domain.StringValue("a")}},
		domain.Row{Time: 1, Dims: []domain.Value{domain.StringValue("a"), domain.NullValue()}}, dims), "a missing dim is null")
}
