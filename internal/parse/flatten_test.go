package parse_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

func flattenIO(discovery *bool, fields ...domain.FlattenField) domain.IOConfig {
	io := jsonIO()
	io.InputFormat.FlattenSpec = &domain.FlattenSpec{UseFieldDiscovery: discovery, Fields: fields}
	return io
}

func path(name, expr string) domain.FlattenField {
	return domain.FlattenField{Type: "path", Name: name, Expr: expr}
}

const nested = `{
	"ts": 1,
	"page": "Main",
	"user": {"name": "bob", "geo": {"country": "fr"}, "a\u0062": "escaped"},
	"tags": ["x", {"k": "v"}, 3],
	"odd key": {"b c": ["deep"]},
	"when": {"ms": 1709210096789}
}`

func TestParseFlattenPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want domain.Value
	}{
		{"$.user.name", sv("bob")},
		{"$.user.geo.country", sv("fr")},
		{"$.user.geo", sv(`{"country":"fr"}`)},
		{"$.user.ab", sv("escaped")},
		{"$.tags[0]", sv("x")},
		{"$.tags[1].k", sv("v")},
		{"$.tags[2]", sv("3")},
		{"$['odd key']['b c'][0]", sv("deep")},
		{"$['user'].name", sv("bob")},
		{"$.page", sv("Main")},
		// Paths that do not resolve are missing, not errors.
		{"$.user.nobody", null},
		{"$.tags[3]", null},
		{"$.tags.k", null},
		{"$.user[0]", null},
		{"$.page.x", null},
		{"$.nothing.at.all", null},
		{"$[0]", null},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, schema("millis", domain.GranularityNone, "out"), flattenIO(nil, path("out", tt.expr)))
			row := parseOne(t, p, nested)
			require.Equal(t, []domain.Value{tt.want}, row.Dims)
		})
	}
}

func TestParseFlattenRootAndFieldDiscovery(t *testing.T) {
	t.Parallel()
	off := false
	fields := []domain.FlattenField{
		{Type: "root", Name: "pg", Expr: "page"},
		{Type: "root", Name: "tags"},
		path("country", "$.user.geo.country"),
		path("ts", "$.when.ms"), // the timestamp is read from the flattened field
	}
	ds := schema("millis", domain.GranularityNone, "pg", "tags", "country", "page")

	// With field discovery (the default) top-level fields are read by name.
	p := mustNew(t, ds, flattenIO(nil, fields...))
	row := parseOne(t, p, nested)
	require.Equal(t, int64(leapMillis), row.Time)
	require.Equal(t, []domain.Value{sv("Main"), sv(`["x",{"k":"v"},3]`), sv("fr"), sv("Main")}, row.Dims)

	// Without, only flattened fields exist.
	p = mustNew(t, ds, flattenIO(&off, fields...))
	row = parseOne(t, p, nested)
	require.Equal(t, []domain.Value{sv("Main"), sv(`["x",{"k":"v"},3]`), sv("fr"), null}, row.Dims)
}

func TestParseFlattenDiscovery(t *testing.T) {
	t.Parallel()
	off := false
	fields := []domain.FlattenField{path("country", "$.user.geo.country"), path("page", "$.user.name"), path("first_tag", "$.tags[0]"), path("gone", "$.no.where"), {Type: "root", Name: "ts"}}
	ds := schema("millis", domain.GranularityNone)
	ds.DimensionsSpec.DimensionExclusions = []string{"first_tag", "odd key"}

	// Top-level fields in message order, then flattened ones; a flattened
	// field shadows the top-level field of its name; one that does not
	// resolve is not discovered.
	p := mustNew(t, ds, flattenIO(nil, fields...))
	row := parseOne(t, p, nested)
	require.Equal(t, []string{"user", "tags", "when", "country", "page"}, names(p.Schema()))
	require.Equal(t, sv("bob"), row.Dims[4])

	p = mustNew(t, ds, flattenIO(&off, fields...))
	row = parseOne(t, p, nested)
	require.Equal(t, []string{"country", "page"}, names(p.Schema()))
	require.Equal(t, []domain.Value{sv("fr"), sv("bob")}, row.Dims)
}

func TestNewRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	ds := schema("millis", domain.GranularityNone, "page")
	tests := []struct {
		name string
		ds   func(*domain.DataSchema)
		io   func(*domain.IOConfig)
		want string
	}{
		{"bad path", nil, func(io *domain.IOConfig) {
			io.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{path("x", "user.name")}}
		}, "flattenSpec.fields[0].expr"},
		{"bad index", nil, func(io *domain.IOConfig) {
			io.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{path("x", "$.a[-1]")}}
		}, "flattenSpec.fields[0].expr"},
		{"bad field type", nil, func(io *domain.IOConfig) {
			io.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{{Type: "jq", Name: "x", Expr: ".a"}}}
		}, "flattenSpec.fields[0].type"},
		{"twice", nil, func(io *domain.IOConfig) {
			io.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{path("x", "$.a"), path("x", "$.b")}}
		}, "flattenSpec.fields[1].name"},
		{"input type", nil, func(io *domain.IOConfig) { io.InputFormat.Type = "avro" }, "inputFormat.type"},
		{"csv without columns", nil, func(io *domain.IOConfig) { *io = csvIO(",", false) }, "inputFormat.columns"},
		{"csv delimiter", nil, func(io *domain.IOConfig) { *io = csvIO(`"`, false, "ts") }, "inputFormat.delimiter"},
		{"csv delimiter CR", nil, func(io *domain.IOConfig) { *io = csvIO("\r", false, "ts") }, "inputFormat.delimiter"},
		{"csv delimiter two chars", nil, func(io *domain.IOConfig) { *io = csvIO(";;", false, "ts") }, "inputFormat.delimiter"},
		{"timestamp format", func(ds *domain.DataSchema) { ds.TimestampSpec.Format = "yyyy-MM-dd" }, nil, "timestampSpec.format"},
		{"timestamp column", func(ds *domain.DataSchema) { ds.TimestampSpec.Column = "" }, nil, "timestampSpec.column"},
		{"granularity", func(ds *domain.DataSchema) { ds.GranularitySpec.QueryGranularity = "fortnight" }, nil, "queryGranularity"},
		{"dimension type", func(ds *domain.DataSchema) { ds.DimensionsSpec.Dimensions[0].Type = "float" }, nil, "dimensions[0].type"},
		{"filter", func(ds *domain.DataSchema) { ds.Filter = &domain.Filter{Type: "regex", Dimension: "page"} }, nil, "dataSchema.filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := ds
			d.DimensionsSpec.Dimensions = append([]domain.DimensionSpec(nil), ds.DimensionsSpec.Dimensions...)
			io := jsonIO()
			if tt.ds != nil {
				tt.ds(&d)
			}
			if tt.io != nil {
				tt.io(&io)
			}
			_, err := parse.New(d, io)
			var fe *domain.FieldError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, fe.Path, tt.want)
		})
	}
}
