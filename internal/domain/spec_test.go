package domain_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// minimalSpec has only the required fields.
const minimalSpec = `{
  "id": "wiki-sup",
  "dataSchema": {
    "dataSource": "wiki",
    "timestampSpec": {"column": "ts"},
    "dimensionsSpec": {"dimensions": ["page", "user"]}
  },
  "ioConfig": {"topic": "wikipedia"}
}`

// fullSpec sets every field to a value other than its default.
const fullSpec = `{
  "id": "wiki.sup_2",
  "dataSchema": {
    "dataSource": "wiki_v2",
    "timestampSpec": {"column": "time", "format": "millis"},
    "dimensionsSpec": {"dimensions": ["page", "user", "country"]},
    "granularitySpec": {"segmentGranularity": "day", "queryGranularity": "minute"}
  },
  "ioConfig": {"topic": "wikipedia", "taskCount": 3, "useEarliestOffset": true, "period": "PT1M"},
  "tuningConfig": {
    "maxRowsPerSegment": 1000,
    "intermediateHandoffPeriod": "PT10M",
    "maxRecordsPerChunk": 500,
    "chunkPeriod": "2s"
  }
}`

// specMap decodes minimalSpec into a generic map that tests can modify.
func specMap(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(minimalSpec), &m))
	return m
}

// set assigns v at the dotted path in m (creating objects on the way);
// a nil v deletes the key.
func set(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := keys[len(keys)-1]
	if v == nil {
		delete(m, last)
		return
	}
	m[last] = v
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestParseSpecMinimalAppliesDefaults(t *testing.T) {
	t.Parallel()
	s, err := domain.ParseSpec([]byte(minimalSpec))
	require.NoError(t, err)

	want := domain.Spec{
		ID: "wiki-sup",
		DataSchema: domain.DataSchema{
			DataSource:     "wiki",
			TimestampSpec:  domain.TimestampSpec{Column: "ts", Format: "auto"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{{Name: "page", Type: domain.TypeString}, {Name: "user", Type: domain.TypeString}}},
			GranularitySpec: domain.GranularitySpec{
				SegmentGranularity: domain.GranularityHour,
				QueryGranularity:   domain.GranularityNone,
			},
		},
		IOConfig: domain.IOConfig{
			Topic:       "wikipedia",
			TaskCount:   1,
			Period:      domain.Duration(30 * time.Second),
			InputFormat: domain.InputFormat{Type: domain.InputJSON},
		},
		TuningConfig: domain.TuningConfig{
			MaxRowsPerSegment:         5_000_000,
			MaxTotalRows:              20_000_000,
			IntermediateHandoffPeriod: 0,
			MaxRecordsPerChunk:        100_000,
			ChunkPeriod:               domain.Duration(time.Second),
			MaxRowsInMemory:           domain.DefaultMaxRowsInMemory,
			MaxBytesInMemory:          domain.DefaultMaxBytesInMemory,
			MaxMessageBytes:           domain.DefaultMaxMessageBytes,
			MaxSequenceBytes:          domain.DefaultMaxSequenceBytes,
			MaxPendingPublishes:       domain.DefaultMaxPendingPublishes,
			ActivityRetryTimeout:      domain.DefaultActivityRetryTimeout,
		},
	}
	require.Equal(t, want, s)
	// The exported defaults are what ParseSpec applies.
	require.Equal(t, domain.DefaultTaskCount, s.IOConfig.TaskCount)
	require.Equal(t, domain.DefaultPeriod, s.IOConfig.Period)
	require.EqualValues(t, domain.DefaultMaxRowsPerSegment, s.TuningConfig.MaxRowsPerSegment)
	require.Equal(t, domain.DefaultMaxRecordsPerChunk, s.TuningConfig.MaxRecordsPerChunk)
	require.Equal(t, domain.DefaultChunkPeriod, s.TuningConfig.ChunkPeriod)
}

func TestParseSpecFullKeepsEveryValue(t *testing.T) {
	t.Parallel()
	s, err := domain.ParseSpec([]byte(fullSpec))
	require.NoError(t, err)

	want := domain.Spec{
		ID: "wiki.sup_2",
		DataSchema: domain.DataSchema{
			DataSource:     "wiki_v2",
			TimestampSpec:  domain.TimestampSpec{Column: "time", Format: "millis"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{{Name: "page", Type: domain.TypeString}, {Name: "user", Type: domain.TypeString}, {Name: "country", Type: domain.TypeString}}},
			GranularitySpec: domain.GranularitySpec{
				SegmentGranularity: domain.GranularityDay,
				QueryGranularity:   domain.GranularityMinute,
			},
		},
		IOConfig: domain.IOConfig{
			Topic:             "wikipedia",
			TaskCount:         3,
			UseEarliestOffset: true,
			Period:            domain.Duration(time.Minute),
			InputFormat:       domain.InputFormat{Type: domain.InputJSON},
		},
		TuningConfig: domain.TuningConfig{
			MaxRowsPerSegment:         1000,
			MaxTotalRows:              domain.DefaultMaxTotalRows,
			IntermediateHandoffPeriod: domain.Duration(10 * time.Minute),
			MaxRecordsPerChunk:        500,
			ChunkPeriod:               domain.Duration(2 * time.Second),
			MaxRowsInMemory:           domain.DefaultMaxRowsInMemory,
			MaxBytesInMemory:          domain.DefaultMaxBytesInMemory,
			MaxMessageBytes:           domain.DefaultMaxMessageBytes,
			MaxSequenceBytes:          domain.DefaultMaxSequenceBytes,
			MaxPendingPublishes:       domain.DefaultMaxPendingPublishes,
			ActivityRetryTimeout:      domain.DefaultActivityRetryTimeout,
		},
	}
	require.Equal(t, want, s)
}

func TestParseSpecRoundTrips(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{"minimal": minimalSpec, "full": fullSpec} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := domain.ParseSpec([]byte(in))
			require.NoError(t, err)
			out := mustJSON(t, s)
			again, err := domain.ParseSpec(out)
			require.NoError(t, err, "re-parsing %s", out)
			require.Equal(t, s, again)
			// Marshalling is stable too.
			require.JSONEq(t, string(out), string(mustJSON(t, again)))
		})
	}
}

func TestParseSpecMissingRequiredFieldNamesPath(t *testing.T) {
	t.Parallel()
	for _, path := range []string{
		"id",
		"dataSchema.dataSource",
		"dataSchema.timestampSpec.column",
		"ioConfig.topic",
	} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			for _, how := range []struct {
				name string
				v    any
			}{
				{"absent", nil},
				{"empty", emptyOf(path)},
			} {
				m := specMap(t)
				set(m, path, how.v)
				_, err := domain.ParseSpec(mustJSON(t, m))
				require.Error(t, err, how.name)
				require.Contains(t, err.Error(), path, how.name)
				var fe *domain.FieldError
				require.True(t, errors.As(err, &fe), "%s: %T %v is not a *FieldError", how.name, err, err)
				require.Equal(t, path, fe.Path, how.name)
				require.NotEmpty(t, fe.Msg, how.name)
				require.Equal(t, path+": "+fe.Msg, fe.Error(), how.name)
			}
		})
	}
}

// emptyOf is the JSON zero value of the field at path.
func emptyOf(path string) any {
	if path == "dataSchema.dimensionsSpec.dimensions" {
		return []any{}
	}
	return ""
}

func TestParseSpecInvalidJSONGivesPosition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		line int
	}{
		{"stray comma on line 3", "{\n  \"id\": \"x\",\n  \"dataSchema\": {,\n}", 3},
		{"missing colon on line 1", `{"id" "x"}`, 1},
		{"bare word on line 2", "{\n  \"id\": nope\n}", 2},
		{"trailing comma on line 4", "{\n\"id\": \"x\",\n\"ioConfig\": {\"topic\": \"t\",\n}\n}", 4},
	}
	pos := regexp.MustCompile(`line (\d+), column (\d+)`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := domain.ParseSpec([]byte(tt.in))
			require.Error(t, err)
			m := pos.FindStringSubmatch(err.Error())
			require.NotNil(t, m, "error %q has no line/column", err)
			require.Equal(t, strconv.Itoa(tt.line), m[1], "error %q", err)
			require.NotEqual(t, "0", m[2])
		})
	}
}

func TestParseSpecRefusesUnknownField(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"topic", "ioConfig.tpoic", "dataSchema.timestampSpec.colum", "tuningConfig.maxRows"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			m := specMap(t)
			set(m, path, "x")
			_, err := domain.ParseSpec(mustJSON(t, m))
			require.Error(t, err)
			name := path[strings.LastIndex(path, ".")+1:]
			require.Contains(t, err.Error(), `"`+name+`"`)
			require.Contains(t, err.Error(), "unknown field")
		})
	}
}

func TestParseSpecWrongTypeNamesField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		v    any
	}{
		{"id", 42},
		{"ioConfig.taskCount", "3"},
		{"ioConfig.useEarliestOffset", "yes"},
		{"tuningConfig.maxRowsPerSegment", 1.5},
		{"dataSchema.dimensionsSpec.dimensions", "page"},
		{"dataSchema.dimensionsSpec.dimensions", []any{"page", 7}},
		{"dataSchema.metricsSpec", map[string]any{"type": "count"}},
		{"dataSchema.timestampSpec", "ts"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			m := specMap(t)
			set(m, tt.path, tt.v)
			_, err := domain.ParseSpec(mustJSON(t, m))
			require.Error(t, err)
			var fe *domain.FieldError
			require.True(t, errors.As(err, &fe), "%T %v is not a *FieldError", err, err)
			require.Equal(t, tt.path, fe.Path)
			require.Contains(t, err.Error(), tt.path)
		})
	}
}

func TestParseSpecRefusesBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		path    string
		v       any
		errPath string // the path the error must name; "" for none
		errText string // a further substring the error must hold
	}{
		{"bad segment granularity", "dataSchema.granularitySpec.segmentGranularity", "fortnight", "dataSchema.granularitySpec.segmentGranularity", "fortnight"},
		{"none segment granularity", "dataSchema.granularitySpec.segmentGranularity", "none", "dataSchema.granularitySpec.segmentGranularity", "none"},
		{"bad query granularity", "dataSchema.granularitySpec.queryGranularity", "decade", "dataSchema.granularitySpec.queryGranularity", "decade"},
		{"bad timestamp format", "dataSchema.timestampSpec.format", "posix", "dataSchema.timestampSpec.format", "iso"},
		{"bad period", "ioConfig.period", "soon", "", "soon"},
		{"negative period", "ioConfig.period", "-5s", "", "negative"},
		{"numeric period", "ioConfig.period", 30, "", "duration"},
		{"bad chunk period", "tuningConfig.chunkPeriod", "P1X", "", "P1X"},
		{"negative task count", "ioConfig.taskCount", -1, "ioConfig.taskCount", ""},
		{"negative max rows", "tuningConfig.maxRowsPerSegment", -5, "tuningConfig.maxRowsPerSegment", ""},
		{"negative max records", "tuningConfig.maxRecordsPerChunk", -5, "tuningConfig.maxRecordsPerChunk", ""},
		{"bad id", "id", "-leading-dash", "id", ""},
		{"id with slash", "id", "a/b", "id", ""},
		{"id too long", "id", strings.Repeat("a", 129), "id", ""},
		{"bad datasource", "dataSchema.dataSource", "wiki pages", "dataSchema.dataSource", ""},
		{"empty dimension", "dataSchema.dimensionsSpec.dimensions", []any{"page", ""}, "dataSchema.dimensionsSpec.dimensions[1]", "empty"},
		{"duplicate dimension", "dataSchema.dimensionsSpec.dimensions", []any{"page", "user", "page"}, "dataSchema.dimensionsSpec.dimensions[2]", `"page" is already the name of dataSchema.dimensionsSpec.dimensions[0]`},
		{"dimension is the timestamp column", "dataSchema.dimensionsSpec.dimensions", []any{"page", "ts"}, "dataSchema.dimensionsSpec.dimensions[1]", `"ts"`},
		{"reserved dimension", "dataSchema.dimensionsSpec.dimensions", []any{"__time"}, "dataSchema.dimensionsSpec.dimensions[0]", "reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := specMap(t)
			set(m, tt.path, tt.v)
			_, err := domain.ParseSpec(mustJSON(t, m))
			require.Error(t, err)
			if tt.errPath != "" {
				var fe *domain.FieldError
				require.True(t, errors.As(err, &fe), "%T %v is not a *FieldError", err, err)
				require.Equal(t, tt.errPath, fe.Path)
			}
			require.Contains(t, err.Error(), tt.errText)
		})
	}
}

func TestParseSpecAcceptsEveryGranularityAndFormat(t *testing.T) {
	t.Parallel()
	for _, g := range []string{"second", "minute", "five_minute", "fifteen_minute", "hour", "six_hour", "day", "week", "month", "year"} {
		for _, f := range []string{"iso", "millis", "seconds", "auto"} {
			m := specMap(t)
			set(m, "dataSchema.granularitySpec.segmentGranularity", g)
			set(m, "dataSchema.granularitySpec.queryGranularity", g)
			set(m, "dataSchema.timestampSpec.format", f)
			s, err := domain.ParseSpec(mustJSON(t, m))
			require.NoError(t, err, "granularity %s, format %s", g, f)
			require.Equal(t, domain.Granularity(g), s.DataSchema.GranularitySpec.SegmentGranularity)
			require.Equal(t, domain.Granularity(g), s.DataSchema.GranularitySpec.QueryGranularity)
			require.Equal(t, f, s.DataSchema.TimestampSpec.Format)
		}
	}
	m := specMap(t)
	set(m, "dataSchema.granularitySpec.queryGranularity", "none")
	_, err := domain.ParseSpec(mustJSON(t, m))
	require.NoError(t, err, "none is a valid query granularity")
}

func TestParseSpecValidateReportsFirstProblem(t *testing.T) {
	t.Parallel()
	// Everything missing: the id is reported first.
	_, err := domain.ParseSpec([]byte(`{}`))
	var fe *domain.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "id", fe.Path)

	// A zero Spec that skipped ApplyDefaults fails on the id too, and one
	// with defaults applied but no topic fails on the topic.
	require.ErrorAs(t, domain.Spec{}.Validate(), &fe)
	require.Equal(t, "id", fe.Path)

	s, err := domain.ParseSpec([]byte(minimalSpec))
	require.NoError(t, err)
	s.IOConfig.Topic = ""
	require.ErrorAs(t, s.Validate(), &fe)
	require.Equal(t, "ioConfig.topic", fe.Path)
}
