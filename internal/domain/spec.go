package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
)

// Spec is one supervisor's ingestion spec: one Kafka topic into one
// datasource. Field names follow Druid's Kafka supervisor spec where the
// concept is the same.
type Spec struct {
	// ID names the supervisor (workflow id "supervisor/<id>"). Required.
	ID           string       `json:"id"`
	DataSchema   DataSchema   `json:"dataSchema"`
	IOConfig     IOConfig     `json:"ioConfig"`
	TuningConfig TuningConfig `json:"tuningConfig"`
}

// DataSchema says what a row is and where it goes.
type DataSchema struct {
	// DataSource is the table segments belong to. Required.
	DataSource      string          `json:"dataSource"`
	TimestampSpec   TimestampSpec   `json:"timestampSpec"`
	DimensionsSpec  DimensionsSpec  `json:"dimensionsSpec"`
	GranularitySpec GranularitySpec `json:"granularitySpec"`
}

// TimestampSpec names the column holding each row's time.
type TimestampSpec struct {
	// Column is the input field with the row's time. Required.
	Column string `json:"column"`
	// Format is iso, millis, seconds or auto. Default auto.
	Format string `json:"format,omitempty"`
}

// DimensionsSpec lists the string columns kept from each row.
type DimensionsSpec struct {
	// Dimensions are the input fields stored as string columns, in order.
	// Required (schemaless discovery is not supported yet).
	Dimensions []string `json:"dimensions"`
}

// GranularitySpec sets how rows are bucketed.
type GranularitySpec struct {
	// SegmentGranularity is the interval one segment covers. Default hour.
	SegmentGranularity Granularity `json:"segmentGranularity,omitempty"`
	// QueryGranularity truncates each row's time. Default none.
	QueryGranularity Granularity `json:"queryGranularity,omitempty"`
}

// IOConfig says where rows come from and how reading is split.
type IOConfig struct {
	// Topic is the Kafka topic to read. Required.
	Topic string `json:"topic"`
	// TaskCount is the number of task groups; partition p is read by group
	// p % taskCount. Default 1.
	TaskCount int `json:"taskCount,omitempty"`
	// UseEarliestOffset starts partitions with no stored offset at their
	// earliest offset instead of their latest. Default false.
	UseEarliestOffset bool `json:"useEarliestOffset,omitempty"`
	// Period is how often the supervisor rediscovers partitions and checks
	// its groups. Default 30s.
	Period Duration `json:"period,omitempty"`
	// TaskDuration rolls each group over to a new generation this long
	// after its generation started: the open sequence closes and the new
	// generation reads on while the old sequences publish (zero: never).
	// Default 0.
	TaskDuration Duration `json:"taskDuration,omitempty"`
}

// TuningConfig bounds the work of each task group.
type TuningConfig struct {
	// MaxRowsPerSegment closes a sequence once it holds this many rows.
	// Default 5,000,000.
	MaxRowsPerSegment int64 `json:"maxRowsPerSegment,omitempty"`
	// MaxTotalRows closes a group's open sequence once the group holds this
	// many unpublished rows across its sequences. Default 20,000,000.
	MaxTotalRows int64 `json:"maxTotalRows,omitempty"`
	// IntermediateHandoffPeriod closes a sequence this long after it opened
	// (zero: never by age). Default 0.
	IntermediateHandoffPeriod Duration `json:"intermediateHandoffPeriod,omitempty"`
	// MaxRecordsPerChunk bounds the records one consume activity reads.
	// Default 100,000.
	MaxRecordsPerChunk int `json:"maxRecordsPerChunk,omitempty"`
	// ChunkPeriod bounds how long one consume activity reads. Default 1s.
	ChunkPeriod Duration `json:"chunkPeriod,omitempty"`
}

// Defaults for optional spec fields.
const (
	DefaultTaskCount          = 1
	DefaultPeriod             = Duration(30e9)
	DefaultMaxRowsPerSegment  = 5_000_000
	DefaultMaxTotalRows       = 20_000_000
	DefaultMaxRecordsPerChunk = 100_000
	DefaultChunkPeriod        = Duration(1e9)
)

// FieldError names the spec field that is wrong and what was expected.
type FieldError struct {
	Path string // e.g. "dataSchema.timestampSpec.column"
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// ParseSpec decodes a JSON spec, refusing unknown fields, fills defaults and
// validates it. Every error names the field path (or the JSON position).
func ParseSpec(data []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, describeJSONError(data, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		line, col := position(data, dec.InputOffset()+1)
		return Spec{}, fmt.Errorf("spec has more after its closing brace, at line %d, column %d: want exactly one JSON object", line, col)
	}
	s.ApplyDefaults()
	return s, s.Validate()
}

// ApplyDefaults fills every optional field left at zero.
func (s *Spec) ApplyDefaults() {
	g := &s.DataSchema.GranularitySpec
	g.SegmentGranularity = Granularity(strings.ToLower(string(g.SegmentGranularity)))
	g.QueryGranularity = Granularity(strings.ToLower(string(g.QueryGranularity)))
	if g.SegmentGranularity == "" {
		g.SegmentGranularity = GranularityHour
	}
	if g.QueryGranularity == "" {
		g.QueryGranularity = GranularityNone
	}
	if s.DataSchema.TimestampSpec.Format == "" {
		s.DataSchema.TimestampSpec.Format = "auto"
	}
	io := &s.IOConfig
	if io.TaskCount == 0 {
		io.TaskCount = DefaultTaskCount
	}
	if io.Period == 0 {
		io.Period = DefaultPeriod
	}
	t := &s.TuningConfig
	if t.MaxRowsPerSegment == 0 {
		t.MaxRowsPerSegment = DefaultMaxRowsPerSegment
	}
	if t.MaxTotalRows == 0 {
		t.MaxTotalRows = DefaultMaxTotalRows
	}
	if t.MaxRecordsPerChunk == 0 {
		t.MaxRecordsPerChunk = DefaultMaxRecordsPerChunk
	}
	if t.ChunkPeriod == 0 {
		t.ChunkPeriod = DefaultChunkPeriod
	}
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Validate reports the first field that is missing or out of range.
func (s Spec) Validate() error {
	ds := s.DataSchema
	checks := []struct {
		bad  bool
		path string
		msg  string
	}{
		{s.ID == "", "id", "required: the supervisor's id"},
		{s.ID != "" && !idPattern.MatchString(s.ID), "id", "want 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"},
		{ds.DataSource == "", "dataSchema.dataSource", "required: the datasource segments belong to"},
		{ds.DataSource != "" && !idPattern.MatchString(ds.DataSource), "dataSchema.dataSource", "want 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"},
		{ds.TimestampSpec.Column == "", "dataSchema.timestampSpec.column", "required: the input field holding each row's time"},
		{!validTimestampFormat(ds.TimestampSpec.Format), "dataSchema.timestampSpec.format", "want iso, millis, seconds or auto"},
		{len(ds.DimensionsSpec.Dimensions) == 0, "dataSchema.dimensionsSpec.dimensions", "required: at least one input field to keep"},
		{s.IOConfig.Topic == "", "ioConfig.topic", "required: the Kafka topic to read"},
		{s.IOConfig.TaskCount < 1, "ioConfig.taskCount", "want 1 or more"},
		{s.TuningConfig.MaxRowsPerSegment < 1, "tuningConfig.maxRowsPerSegment", "want 1 or more"},
		{s.TuningConfig.MaxTotalRows < 1, "tuningConfig.maxTotalRows", "want 1 or more"},
		{s.TuningConfig.MaxRecordsPerChunk < 1, "tuningConfig.maxRecordsPerChunk", "want 1 or more"},
	}
	for _, c := range checks {
		if c.bad {
			return &FieldError{Path: c.path, Msg: c.msg}
		}
	}
	if err := validateDimensions(ds); err != nil {
		return err
	}
	for path, g := range map[string]Granularity{
		"dataSchema.granularitySpec.segmentGranularity": ds.GranularitySpec.SegmentGranularity,
		"dataSchema.granularitySpec.queryGranularity":   ds.GranularitySpec.QueryGranularity,
	} {
		if _, err := ParseGranularity(string(g)); err != nil {
			return &FieldError{Path: path, Msg: err.Error()}
		}
	}
	if ds.GranularitySpec.SegmentGranularity == GranularityNone {
		return &FieldError{Path: "dataSchema.granularitySpec.segmentGranularity", Msg: "none is not a segment interval: want second ... year"}
	}
	return nil
}

func validateDimensions(ds DataSchema) error {
	seen := map[string]bool{}
	for i, d := range ds.DimensionsSpec.Dimensions {
		path := fmt.Sprintf("dataSchema.dimensionsSpec.dimensions[%d]", i)
		switch {
		case d == "":
			return &FieldError{Path: path, Msg: "empty name"}
		case d == ds.TimestampSpec.Column || strings.HasPrefix(d, "__"):
			return &FieldError{Path: path, Msg: fmt.Sprintf("%q is reserved (the timestamp column or a name starting with __)", d)}
		case seen[d]:
			return &FieldError{Path: path, Msg: fmt.Sprintf("%q is listed twice", d)}
		}
		seen[d] = true
	}
	return nil
}

func validTimestampFormat(f string) bool {
	switch f {
	case "iso", "millis", "seconds", "auto":
		return true
	}
	return false
}

// describeJSONError turns decoder errors into messages with a line and
// column, or the field path for type mismatches and unknown fields.
func describeJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(data, syn.Offset)
		return fmt.Errorf("spec is not valid JSON at line %d, column %d: %v", line, col, syn)
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(data, int64(len(data))+1)
		return fmt.Errorf("spec is not valid JSON: it ends too early, at line %d, column %d", line, col)
	case errors.As(err, &typ) && typ.Type == durationType:
		return &FieldError{Path: typ.Field, Msg: typ.Value}
	case errors.As(err, &typ):
		return &FieldError{Path: typ.Field, Msg: fmt.Sprintf("want %s, got JSON %s", jsonKind(typ.Type), typ.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return fmt.Errorf("spec has an %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return fmt.Errorf("spec: %w", err)
}

// jsonKind names the JSON a Go type reads, for error messages.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// position turns a decoder offset (which counts the offending byte as read)
// into the line and column of that byte.
func position(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for _, b := range data[:max(0, min(int(offset)-1, len(data)))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
