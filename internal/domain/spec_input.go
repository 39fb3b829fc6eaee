package domain

import (
	"fmt"
	"regexp"
	"unicode/utf8"
)

// InputFormat says how one Kafka message becomes rows.
type InputFormat struct {
	// Type is json, csv, avro_stream, protobuf, json_schema or kafka
	// (spec_formats.go). Default json.
	Type string `json:"type,omitempty"`
	// FlattenSpec (json, avro_stream, protobuf, json_schema) names nested
	// fields to lift to the top level.
	FlattenSpec *FlattenSpec `json:"flattenSpec,omitempty"`
	// Columns (csv) names the columns in order. Required unless
	// FindColumnsFromHeader.
	Columns []string `json:"columns,omitempty"`
	// FindColumnsFromHeader (csv): every message's first line is a header
	// naming its columns; the following lines are rows.
	FindColumnsFromHeader bool `json:"findColumnsFromHeader,omitempty"`
	// Delimiter (csv) separates fields: one character. Default ",".
	Delimiter string `json:"delimiter,omitempty"`
	// Schema-registry formats and the kafka format: spec_formats.go.
	RecordFormats
}

// FlattenSpec lifts nested JSON fields to named top-level fields.
type FlattenSpec struct {
	// UseFieldDiscovery keeps the top-level fields too (for discovery and
	// for plain names). Default true.
	UseFieldDiscovery *bool `json:"useFieldDiscovery,omitempty"`
	// Fields are the fields to lift.
	Fields []FlattenField `json:"fields"`
}

// FlattenField names one field: a top-level one ("root") or one at a path
// such as $.user.name or $.tags[0] ("path").
type FlattenField struct {
	Type string `json:"type"` // root or path
	Name string `json:"name"`
	Expr string `json:"expr,omitempty"`
}

// DiscoversFields reports whether top-level fields are kept as they are.
func (f *FlattenSpec) DiscoversFields() bool {
	return f == nil || f.UseFieldDiscovery == nil || *f.UseFieldDiscovery
}

// Input format types.
const (
	InputJSON = "json"
	InputCSV  = "csv"
)

func (f *InputFormat) applyDefaults() {
	if f.Type == "" {
		f.Type = InputJSON
	}
	f.applyRecordDefaults()
	if f.Type == InputCSV && f.Delimiter == "" {
		f.Delimiter = ","
	}
}

// pathExpr is the JSONPath subset flattenSpec accepts: $ followed by
// .name, ['name'] or [index] steps.
var pathExpr = regexp.MustCompile(`^\$((\.[A-Za-z_][A-Za-z0-9_\-]*)|(\['[^']*'\])|(\[[0-9]+\]))+$`)

func (f InputFormat) validate(path string) error {
	if err := f.checkRecordFields(path); err != nil {
		return err
	}
	switch f.Type {
	case InputAvroStream, InputProtobuf, InputJSONSchema, InputKafka:
		return f.validateRecordFormat(path)
	case InputJSON:
		if f.Columns != nil || f.FindColumnsFromHeader {
			return &FieldError{Path: path + ".columns", Msg: "columns and findColumnsFromHeader are for csv"}
		}
		return f.FlattenSpec.validate(path + ".flattenSpec")
	case InputCSV:
		if f.FlattenSpec != nil {
			return &FieldError{Path: path + ".flattenSpec", Msg: "flattenSpec is for json"}
		}
		if len(f.Columns) == 0 && !f.FindColumnsFromHeader {
			return &FieldError{Path: path + ".columns", Msg: "required for csv: the column names in order (or set findColumnsFromHeader)"}
		}
		if utf8.RuneCountInString(f.Delimiter) != 1 || f.Delimiter == "\"" || f.Delimiter == "\n" {
			return &FieldError{Path: path + ".delimiter", Msg: fmt.Sprintf("%q: want one character other than a quote or newline", f.Delimiter)}
		}
		return nil
	}
	return &FieldError{Path: path + ".type", Msg: fmt.Sprintf("%q is not an input format: want json, csv, avro_stream, protobuf, json_schema or kafka", f.Type)}
}

func (f *FlattenSpec) validate(path string) error {
	if f == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, fl := range f.Fields {
		p := fmt.Sprintf("%s.fields[%d]", path, i)
		switch {
		case fl.Name == "":
			return &FieldError{Path: p + ".name", Msg: "required"}
		case seen[fl.Name]:
			return &FieldError{Path: p + ".name", Msg: fmt.Sprintf("%q is listed twice", fl.Name)}
		case fl.Type == "path" && !pathExpr.MatchString(fl.Expr):
			return &FieldError{Path: p + ".expr", Msg: fmt.Sprintf("%q: want a path such as $.user.name, $.tags[0] or $['odd key']", fl.Expr)}
		case fl.Type != "path" && fl.Type != "root":
			return &FieldError{Path: p + ".type", Msg: fmt.Sprintf("%q: want root or path", fl.Type)}
		}
		seen[fl.Name] = true
	}
	return nil
}
