package domain

import (
	"encoding/json"
	"fmt"
)

func (f *InputFormat) applyRecordDefaults() {
	if f.Type != InputKafka {
		return
	}
	if f.ValueFormat != nil {
		f.ValueFormat.applyDefaults()
	}
	if f.KeyFormat != nil {
		f.KeyFormat.applyDefaults()
	}
	defaults := []struct {
		p *string
		v string
	}{
		{&f.TimestampColumnName, DefaultKafkaTimestampColumn}, {&f.TopicColumnName, DefaultKafkaTopicColumn},
		{&f.KeyColumnName, DefaultKafkaKeyColumn}, {&f.HeaderColumnPrefix, DefaultKafkaHeaderPrefix},
	}
	for _, d := range defaults {
		if *d.p == "" {
			*d.p = d.v
		}
	}
}

// checkRecordFields refuses this file's fields on a format they are not
// for.
func (f InputFormat) checkRecordFields(path string) error {
	forType := []struct {
		set   bool
		name  string
		types []string
	}{
		{f.AvroBytesDecoder != nil, "avroBytesDecoder", []string{InputAvroStream}},
		{f.ProtoBytesDecoder != nil, "protoBytesDecoder", []string{InputProtobuf}},
		{f.JSONBytesDecoder != nil, "jsonBytesDecoder", []string{InputJSONSchema}},
		{f.BinaryAsString, "binaryAsString", []string{InputAvroStream, InputProtobuf}},
		{f.ValueFormat != nil, "valueFormat", []string{InputKafka}},
		{f.KeyFormat != nil, "keyFormat", []string{InputKafka}},
		{f.HeaderFormat != nil, "headerFormat", []string{InputKafka}},
		{f.PartitionColumnName != "" || f.OffsetColumnName != "", "partitionColumnName", []string{InputKafka}},
	}
	for _, c := range forType {
		if c.set && !contains(c.types, f.Type) {
			return &FieldError{Path: path + "." + c.name, Msg: fmt.Sprintf("is for %v, not %s", c.types, f.Type)}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (f InputFormat) validateRecordFormat(path string) error {
	if f.Columns != nil || f.FindColumnsFromHeader {
		return &FieldError{Path: path + ".columns", Msg: "columns and findColumnsFromHeader are for csv"}
	}
	switch f.Type {
	case InputAvroStream:
		if err := f.AvroBytesDecoder.validate(path+".avroBytesDecoder", true); err != nil {
			return err
		}
	case InputProtobuf:
		if err := f.ProtoBytesDecoder.validate(path+".protoBytesDecoder", false); err != nil {
			return err
		}
	case InputJSONSchema:
		if err := f.JSONBytesDecoder.validate(path+".jsonBytesDecoder", false); err != nil {
			return err
		}
	case InputKafka:
		return f.validateKafka(path)
	}
	return f.FlattenSpec.validate(path + ".flattenSpec")
}

func (d *BytesDecoder) validate(path string, inline bool) error {
	if d == nil {
		return &FieldError{Path: path, Msg: "required: {\"type\": \"schema_registry\", \"url\": ...}"}
	}
	switch d.Type {
	case DecoderSchemaRegistry:
		if where, msg := CheckRegistry(d.RegistryURLs(), d.Config, d.Headers); msg != "" {
			return &FieldError{Path: path + "." + where, Msg: msg}
		}
		if len(d.Schema) > 0 {
			return &FieldError{Path: path + ".schema", Msg: "is for schema_inline"}
		}
		return nil
	case DecoderSchemaInline:
		if !inline {
			break
		}
		var v any
		if len(d.Schema) == 0 || json.Unmarshal(d.Schema, &v) != nil {
			return &FieldError{Path: path + ".schema", Msg: "required for schema_inline: the Avro schema (JSON) every value is written with"}
		}
		if d.URL != "" || len(d.URLs) > 0 {
			return &FieldError{Path: path + ".url", Msg: "is for schema_registry"}
		}
		return nil
	}
	want := "schema_registry"
	if inline {
		want = "schema_registry or schema_inline"
	}
	return &FieldError{Path: path + ".type", Msg: fmt.Sprintf("%q: want %s", d.Type, want)}
}

func (f InputFormat) validateKafka(path string) error {
	if f.FlattenSpec != nil {
		return &FieldError{Path: path + ".flattenSpec", Msg: "goes in valueFormat"}
	}
	if f.ValueFormat == nil {
		return &FieldError{Path: path + ".valueFormat", Msg: "required: the format of the record's value, e.g. {\"type\": \"json\"}"}
	}
	for _, sub := range []struct {
		name string
		f    *InputFormat
	}{{"valueFormat", f.ValueFormat}, {"keyFormat", f.KeyFormat}} {
		if sub.f == nil {
			continue
		}
		if sub.f.Type == InputKafka {
			return &FieldError{Path: path + "." + sub.name + ".type", Msg: "kafka cannot wrap kafka"}
		}
		if sub.name == "keyFormat" && sub.f.Type == InputCSV {
			return &FieldError{Path: path + ".keyFormat.type", Msg: "want json, avro_stream, protobuf or json_schema; without keyFormat the key is read as text"}
		}
		if err := sub.f.validate(path + "." + sub.name); err != nil {
			return err
		}
	}
	if h := f.HeaderFormat; h != nil {
		if h.Type != "string" {
			return &FieldError{Path: path + ".headerFormat.type", Msg: fmt.Sprintf("%q: want string", h.Type)}
		}
		if h.Encoding != "" && h.Encoding != "UTF-8" && h.Encoding != "ISO-8859-1" {
			return &FieldError{Path: path + ".headerFormat.encoding", Msg: fmt.Sprintf("%q: want UTF-8 or ISO-8859-1", h.Encoding)}
		}
	}
	names := map[string]string{}
	for _, c := range []struct{ field, name string }{
		{"timestampColumnName", f.TimestampColumnName}, {"topicColumnName", f.TopicColumnName},
		{"keyColumnName", f.KeyColumnName}, {"partitionColumnName", f.PartitionColumnName}, {"offsetColumnName", f.OffsetColumnName},
	} {
		if c.name == "" {
			continue
		}
		if other, ok := names[c.name]; ok {
			return &FieldError{Path: path + "." + c.field, Msg: fmt.Sprintf("%q is also %s: want a name used once", c.name, other)}
		}
		names[c.name] = c.field
	}
	return nil
}
