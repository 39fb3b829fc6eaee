package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
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
	MetricsSpec     []MetricSpec    `json:"metricsSpec,omitempty"`
	GranularitySpec GranularitySpec `json:"granularitySpec"`
	// Filter keeps only rows whose dimension has the value. Optional.
	Filter *Filter `json:"filter,omitempty"`
}

// TimestampSpec names the column holding each row's time.
type TimestampSpec struct {
	// Column is the input field with the row's time. Required.
	Column string `json:"column"`
	// Format is iso, millis, seconds, auto, or a Go time layout (such as
	// "2006-01-02 15:04:05"). Default auto.
	Format string `json:"format,omitempty"`
}

// DimensionsSpec says which input fields become dimension columns.
type DimensionsSpec struct {
	// Dimensions are the dimension columns, in order. Each is a name (a
	// string dimension) or {"name", "type": string|long|double}. When
	// empty, every top-level or flattened field that is not the timestamp,
	// a metric's input, excluded, or named with a leading __ becomes a
	// string dimension, in first-seen order (schemaless discovery).
	Dimensions []DimensionSpec `json:"dimensions"`
	// DimensionExclusions are fields discovery leaves out.
	DimensionExclusions []string `json:"dimensionExclusions,omitempty"`
}

// GranularitySpec sets how rows are bucketed.
type GranularitySpec struct {
	// SegmentGranularity is the interval one segment covers. Default hour.
	SegmentGranularity Granularity `json:"segmentGranularity,omitempty"`
	// QueryGranularity truncates each row's time. Default none.
	QueryGranularity Granularity `json:"queryGranularity,omitempty"`
	// Rollup aggregates rows with the same truncated time and dimensions.
	// Default true, as in Druid.
	Rollup *bool `json:"rollup,omitempty"`
}

// RollupOn reports whether rollup is on (the default).
func (g GranularitySpec) RollupOn() bool { return g.Rollup == nil || *g.Rollup }

// IOConfig says where rows come from and how reading is split.
type IOConfig struct {
	// Topic is the Kafka topic to read. Exactly one of Topic and
	// TopicPattern is required.
	Topic string `json:"topic"`
	// TopicPattern reads every topic whose whole name matches this regular
	// expression (Go RE2 syntax) into the datasource, as Druid's
	// topicPattern does; topics that start matching are read from the next
	// period on (spec_topics.go).
	TopicPattern string `json:"topicPattern,omitempty"`
	// TopicDimension, when set, names a string dimension that carries each
	// row's source topic, as Kafka Connect's topic field does. Optional.
	TopicDimension string `json:"topicDimension,omitempty"`
	// TaskCount is the number of task groups; partition p is read by group
	// p % taskCount (with a topicPattern, see GroupOf). Default 1.
	TaskCount int `json:"taskCount,omitempty"`
	// UseEarliestOffset starts partitions with no stored offset at their
	// earliest offset instead of their latest. Default false.
	UseEarliestOffset bool `json:"useEarliestOffset,omitempty"`
	// ResetOffsetAutomatically: when a group's next offset is no longer in
	// its partition (records expired by retention, or the topic deleted and
	// recreated), the supervisor resets that partition's stored offset to
	// the earliest offset if useEarliestOffset, else the latest, and goes
	// on, recording the reset and the offsets it skipped in its status.
	// Off, the group fails with an OffsetOutOfRange error until someone
	// runs `starter reset`. Default false, as in Druid.
	ResetOffsetAutomatically bool `json:"resetOffsetAutomatically,omitempty"`
	// Period is how often the supervisor rediscovers partitions and checks
	// its groups. Default 30s.
	Period Duration `json:"period,omitempty"`
	// TaskDuration rolls each group over to a new generation this long
	// after its generation started: the open sequence closes and the new
	// generation reads on while the old sequences publish (zero: never).
	// Default 0.
	TaskDuration Duration `json:"taskDuration,omitempty"`
	// InputFormat says how a message becomes rows. Default JSON.
	InputFormat InputFormat `json:"inputFormat"`
	// LateMessageRejectionPeriod throws away rows whose time is more than
	// this before the moment they are read (zero: keep all). Default 0.
	LateMessageRejectionPeriod Duration `json:"lateMessageRejectionPeriod,omitempty"`
	// EarlyMessageRejectionPeriod throws away rows whose time is more than
	// this after the moment they are read (zero: keep all). Default 0.
	EarlyMessageRejectionPeriod Duration `json:"earlyMessageRejectionPeriod,omitempty"`
	// DeadLetterTopic receives every unparseable or thrown-away message,
	// unchanged, with headers saying where it came from and why. Optional.
	DeadLetterTopic string `json:"deadLetterTopic,omitempty"`
	// IcebergTable: every publish also commits its segments as a snapshot
	// of the datasource's Apache Iceberg table, in the transaction that
	// moves the offsets. Default true. A datasource that published
	// segments before it had a table gets one from `starter table create`.
	IcebergTable *bool `json:"icebergTable,omitempty"`
	// AutoScalerConfig lets the supervisor change taskCount from its lag
	// (autoscaler.go). Optional; off by default.
	AutoScalerConfig *AutoScalerConfig `json:"autoScalerConfig,omitempty"`
	// ConsumerProperties is Druid's map of Kafka consumer properties, of
	// which handoff reads isolation.level: read_committed or
	// read_uncommitted (spec_consumer.go). Default read_committed.
	ConsumerProperties map[string]any `json:"consumerProperties,omitempty"`
}

// TableOn reports whether publishes commit to the datasource's Iceberg
// table (IcebergTable, default true).
func (c IOConfig) TableOn() bool { return c.IcebergTable == nil || *c.IcebergTable }

// TuningConfig bounds the work of each task group.
type TuningConfig struct {
	// MaxRowsPerSegment closes a sequence once it holds this many rows.
	// Default 5,000,000.
	MaxRowsPerSegment int64 `json:"maxRowsPerSegment,omitempty"`
	// MaxTotalRows closes a group's open sequence once the group holds this
	// many unpublished rows across its sequences. Default 20,000,000.
	MaxTotalRows int64 `json:"maxTotalRows,omitempty"`
	// IntermediateHandoffPeriod closes a sequence about this long after its
	// first record, on its group's phase of the period (HandoffDue; zero:
	// never by age). Default 0.
	IntermediateHandoffPeriod Duration `json:"intermediateHandoffPeriod,omitempty"`
	// MaxRecordsPerChunk bounds the records of one chunk (one staging
	// file). Default 100,000.
	MaxRecordsPerChunk int `json:"maxRecordsPerChunk,omitempty"`
	// ChunkPeriod bounds how long a chunk's first record waits in memory
	// before the chunk is staged (and, with older workers, how long one
	// consume activity reads). Default 1s.
	ChunkPeriod Duration `json:"chunkPeriod,omitempty"`
	// MaxRowsInMemory bounds the rows (after rollup) one consume activity
	// holds before it writes its chunk. Default 150,000.
	MaxRowsInMemory int `json:"maxRowsInMemory,omitempty"`
	// MaxBytesInMemory bounds the bytes of rows one consume activity holds
	// before it writes its chunk. Default 64 MiB.
	MaxBytesInMemory int64 `json:"maxBytesInMemory,omitempty"`
	// MaxParseExceptions fails the group with a ParseExceptionsExceeded
	// error once more rows than this were unparseable (0 fails on the
	// first). Default unlimited.
	MaxParseExceptions *int64 `json:"maxParseExceptions,omitempty"`
	// MaxSavedParseExceptions keeps this many of the latest unparseable
	// rows per supervisor in the parse_errors table. Default 0.
	MaxSavedParseExceptions int `json:"maxSavedParseExceptions,omitempty"`
	// LogParseExceptions logs every unparseable row. Default false.
	LogParseExceptions bool `json:"logParseExceptions,omitempty"`
	// MaxMessageBytes fails the group with a MessageTooLarge error naming
	// the partition and offset of a message larger than this, rather than
	// holding it. Default 8 MiB.
	MaxMessageBytes int64 `json:"maxMessageBytes,omitempty"`
	// MaxSequenceBytes closes a sequence once its staged chunks hold this
	// many bytes. Default 1 GiB.
	MaxSequenceBytes int64 `json:"maxSequenceBytes,omitempty"`
	// MaxPendingPublishes is how many closed sequences of a group may wait
	// to publish; past it the group stops reading until one commits.
	// Default 2.
	MaxPendingPublishes int `json:"maxPendingPublishes,omitempty"`
	// ActivityRetryTimeout bounds how long a consume or publish is retried
	// (with back-off capped at a minute) before its group fails with the
	// last error. Default 30m.
	ActivityRetryTimeout Duration `json:"activityRetryTimeout,omitempty"`
}

// Defaults for optional spec fields.
const (
	DefaultTaskCount            = 1
	DefaultPeriod               = Duration(30e9)
	DefaultMaxRowsPerSegment    = 5_000_000
	DefaultMaxTotalRows         = 20_000_000
	DefaultMaxRecordsPerChunk   = 100_000
	DefaultChunkPeriod          = Duration(1e9)
	DefaultMaxRowsInMemory      = 150_000
	DefaultMaxBytesInMemory     = 64 << 20
	DefaultMaxMessageBytes      = 8 << 20
	DefaultMaxSequenceBytes     = 1 << 30
	DefaultMaxPendingPublishes  = 2
	DefaultActivityRetryTimeout = Duration(30 * 60e9)
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

// orDefault sets *v to def when it is the zero value.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// ApplyDefaults fills every optional field left at zero.
func (s *Spec) ApplyDefaults() {
	g := &s.DataSchema.GranularitySpec
	g.SegmentGranularity = Granularity(strings.ToLower(string(g.SegmentGranularity)))
	g.QueryGranularity = Granularity(strings.ToLower(string(g.QueryGranularity)))
	orDefault(&g.SegmentGranularity, GranularityHour)
	orDefault(&g.QueryGranularity, GranularityNone)
	orDefault(&s.DataSchema.TimestampSpec.Format, "auto")
	io, t := &s.IOConfig, &s.TuningConfig
	orDefault(&io.TaskCount, DefaultTaskCount)
	orDefault(&io.Period, DefaultPeriod)
	orDefault(&t.MaxRowsPerSegment, DefaultMaxRowsPerSegment)
	orDefault(&t.MaxTotalRows, DefaultMaxTotalRows)
	orDefault(&t.MaxRecordsPerChunk, DefaultMaxRecordsPerChunk)
	orDefault(&t.ChunkPeriod, DefaultChunkPeriod)
	orDefault(&t.MaxRowsInMemory, DefaultMaxRowsInMemory)
	orDefault(&t.MaxBytesInMemory, DefaultMaxBytesInMemory)
	orDefault(&t.MaxMessageBytes, DefaultMaxMessageBytes)
	orDefault(&t.MaxSequenceBytes, DefaultMaxSequenceBytes)
	orDefault(&t.MaxPendingPublishes, DefaultMaxPendingPublishes)
	orDefault(&t.ActivityRetryTimeout, DefaultActivityRetryTimeout)
	s.IOConfig.InputFormat.applyDefaults()
	if a := s.IOConfig.AutoScalerConfig; a != nil {
		a.applyDefaults()
	}
	for i := range s.DataSchema.DimensionsSpec.Dimensions {
		if s.DataSchema.DimensionsSpec.Dimensions[i].Type == "" {
			s.DataSchema.DimensionsSpec.Dimensions[i].Type = TypeString
		}
	}
}

// Validate reports the first field that is missing or out of range.
func (s Spec) Validate() error {
	ds := s.DataSchema
	// What is wrong with each name ("" when nothing; checked once present).
	idBad, dsBad := nameProblem(s.ID), nameProblem(ds.DataSource)
	topicBad, dlqBad := topicProblem(s.IOConfig.Topic), topicProblem(s.IOConfig.DeadLetterTopic)
	io := s.IOConfig
	checks := []struct {
		bad  bool
		path string
		msg  string
	}{
		{s.ID == "", "id", "required: the supervisor's id"},
		{s.ID != "" && idBad != "", "id", idBad},
		{ds.DataSource == "", "dataSchema.dataSource", "required: the datasource segments belong to"},
		{ds.DataSource != "" && dsBad != "", "dataSchema.dataSource", dsBad},
		{ds.TimestampSpec.Column == "", "dataSchema.timestampSpec.column", "required: the input field holding each row's time"},
		{!validTimestampFormat(ds.TimestampSpec.Format), "dataSchema.timestampSpec.format", "want iso, millis, seconds, auto, or a Go time layout such as \"2006-01-02 15:04:05\""},
		{io.Topic == "" && io.TopicPattern == "", "ioConfig.topic", "required: the Kafka topic to read (or ioConfig.topicPattern, a regular expression its topics match)"},
		{io.Topic != "" && io.TopicPattern != "", "ioConfig.topicPattern", "set ioConfig.topic or ioConfig.topicPattern, not both"},
		{s.IOConfig.Topic != "" && topicBad != "", "ioConfig.topic", topicBad},
		{s.IOConfig.TaskCount < 1, "ioConfig.taskCount", "want 1 or more"},
		{s.TuningConfig.MaxRowsPerSegment < 1, "tuningConfig.maxRowsPerSegment", "want 1 or more"},
		{s.TuningConfig.MaxTotalRows < 1, "tuningConfig.maxTotalRows", "want 1 or more"},
		{s.TuningConfig.MaxRecordsPerChunk < 1, "tuningConfig.maxRecordsPerChunk", "want 1 or more"},
		{s.TuningConfig.MaxRowsInMemory < 1, "tuningConfig.maxRowsInMemory", "want 1 or more"},
		{s.TuningConfig.MaxBytesInMemory < 1<<20, "tuningConfig.maxBytesInMemory", "want 1048576 (1 MiB) or more"},
		{s.TuningConfig.MaxParseExceptions != nil && *s.TuningConfig.MaxParseExceptions < 0, "tuningConfig.maxParseExceptions", "want 0 or more (leave it out for unlimited)"},
		{s.TuningConfig.MaxSavedParseExceptions < 0 || s.TuningConfig.MaxSavedParseExceptions > 100_000, "tuningConfig.maxSavedParseExceptions", "want 0 to 100000"},
		{s.IOConfig.DeadLetterTopic != "" && dlqBad != "", "ioConfig.deadLetterTopic", dlqBad},
		{s.IOConfig.DeadLetterTopic != "" && s.IOConfig.DeadLetterTopic == s.IOConfig.Topic, "ioConfig.deadLetterTopic", "must not be the topic being read"},
		{s.TuningConfig.MaxMessageBytes < 1, "tuningConfig.maxMessageBytes", "want 1 or more"},
		{s.TuningConfig.MaxSequenceBytes < 1, "tuningConfig.maxSequenceBytes", "want 1 or more"},
		{s.TuningConfig.MaxPendingPublishes < 1, "tuningConfig.maxPendingPublishes", "want 1 or more"},
		{s.TuningConfig.ActivityRetryTimeout.D() < time.Minute, "tuningConfig.activityRetryTimeout", "want 1m or more"},
	}
	for _, c := range checks {
		if c.bad {
			return &FieldError{Path: c.path, Msg: c.msg}
		}
	}
	if err := s.IOConfig.validateTopics(); err != nil {
		return err
	}
	if err := validateColumns(ds); err != nil {
		return err
	}
	if err := validateTopicDimension(ds, s.IOConfig.TopicDimension); err != nil {
		return err
	}
	if err := validateConsumerProperties(s.IOConfig.ConsumerProperties); err != nil {
		return err
	}
	if err := validateFilter(ds); err != nil {
		return err
	}
	if err := s.IOConfig.InputFormat.validate("ioConfig.inputFormat"); err != nil {
		return err
	}
	if a := s.IOConfig.AutoScalerConfig; a != nil {
		if err := a.validate(s.IOConfig.TaskCount); err != nil {
			return err
		}
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

// describeJSONError turns decoder errors into messages with a line and
// column, or the field path for type mismatches and unknown fields.
func describeJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(data, syn.Offset)
		return fmt.Errorf("spec is not valid JSON at line %d, column %d: %v", line, col, syn)
	case errors.Is(err, io.EOF):
		return errors.New("spec is empty: want one JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(data, int64(len(data))+1)
		return fmt.Errorf("spec is not valid JSON: it ends too early, at line %d, column %d", line, col)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("spec is not a JSON object: got JSON %s", typ.Value)
	case errors.As(err, &typ) && typ.Type == durationType:
		return &FieldError{Path: typ.Field, Msg: typ.Value}
	case errors.As(err, &typ):
		return &FieldError{Path: typ.Field, Msg: fmt.Sprintf("want %s, got JSON %s", jsonKind(typ.Type), typ.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// The name is quoted cut short: a huge key makes a short error.
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		if unq, uerr := strconv.Unquote(name); uerr == nil {
			name = QuoteName(unq)
		}
		return fmt.Errorf("spec has an unknown field %s", name)
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
