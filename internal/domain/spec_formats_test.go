package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestRecordFormatsValidate(t *testing.T) {
	t.Parallel()
	reg := map[string]any{"type": "schema_registry", "url": "http://registry:8081"}
	tests := []struct {
		name     string
		format   map[string]any
		wantPath string // "" for valid
	}{
		{"avro from the registry", map[string]any{"type": "avro_stream", "avroBytesDecoder": reg}, ""},
		{"avro inline", map[string]any{"type": "avro_stream", "avroBytesDecoder": map[string]any{"type": "schema_inline", "schema": map[string]any{"type": "record", "name": "E", "fields": []any{}}}}, ""},
		{"protobuf", map[string]any{"type": "protobuf", "protoBytesDecoder": reg, "binaryAsString": true}, ""},
		{"json schema", map[string]any{"type": "json_schema", "jsonBytesDecoder": reg}, ""},
		{"kafka", map[string]any{"type": "kafka", "valueFormat": map[string]any{"type": "avro_stream", "avroBytesDecoder": reg}, "keyFormat": map[string]any{"type": "json"}, "headerFormat": map[string]any{"type": "string", "encoding": "ISO-8859-1"}}, ""},
		{"avro without decoder", map[string]any{"type": "avro_stream"}, "ioConfig.inputFormat.avroBytesDecoder"},
		{"inline without schema", map[string]any{"type": "avro_stream", "avroBytesDecoder": map[string]any{"type": "schema_inline"}}, "ioConfig.inputFormat.avroBytesDecoder.schema"},
		{"protobuf inline", map[string]any{"type": "protobuf", "protoBytesDecoder": map[string]any{"type": "schema_inline"}}, "ioConfig.inputFormat.protoBytesDecoder.type"},
		{"registry without url", map[string]any{"type": "protobuf", "protoBytesDecoder": map[string]any{"type": "schema_registry"}}, "ioConfig.inputFormat.protoBytesDecoder.url"},
		{"password in the spec", map[string]any{"type": "avro_stream", "avroBytesDecoder": map[string]any{"type": "schema_registry", "url": "https://r", "config": map[string]any{"basic.auth.user.info": "fred:letmein"}}}, "ioConfig.inputFormat.avroBytesDecoder.config.basic.auth.user.info"},
		{"password in the url", map[string]any{"type": "avro_stream", "avroBytesDecoder": map[string]any{"type": "schema_registry", "urls": []any{"https://fred:pw@r"}}}, "ioConfig.inputFormat.avroBytesDecoder.urls[0]"},
		{"decoder of another format", map[string]any{"type": "json", "avroBytesDecoder": reg}, "ioConfig.inputFormat.avroBytesDecoder"},
		{"kafka without value", map[string]any{"type": "kafka"}, "ioConfig.inputFormat.valueFormat"},
		{"kafka in kafka", map[string]any{"type": "kafka", "valueFormat": map[string]any{"type": "kafka"}}, "ioConfig.inputFormat.valueFormat.type"},
		{"bad value format", map[string]any{"type": "kafka", "valueFormat": map[string]any{"type": "protobuf"}}, "ioConfig.inputFormat.valueFormat.protoBytesDecoder"},
		{"header encoding", map[string]any{"type": "kafka", "valueFormat": map[string]any{"type": "json"}, "headerFormat": map[string]any{"type": "string", "encoding": "UTF-16"}}, "ioConfig.inputFormat.headerFormat.encoding"},
		{"a name twice", map[string]any{"type": "kafka", "valueFormat": map[string]any{"type": "json"}, "offsetColumnName": "kafka.key"}, "ioConfig.inputFormat.offsetColumnName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := specMap(t)
			set(m, "ioConfig.inputFormat", tt.format)
			s, err := domain.ParseSpec(mustJSON(t, m))
			if tt.wantPath == "" {
				require.NoError(t, err)
				require.Equal(t, tt.format["type"], s.IOConfig.InputFormat.Type)
				return
			}
			var fe *domain.FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tt.wantPath, fe.Path, "%v", err)
			require.NotContains(t, err.Error(), "letmein")
			require.NotContains(t, err.Error(), "pw@")
		})
	}
}

func TestKafkaFormatDefaultsAreDruids(t *testing.T) {
	t.Parallel()
	m := specMap(t)
	set(m, "ioConfig.inputFormat", map[string]any{"type": "kafka", "valueFormat": map[string]any{}})
	s, err := domain.ParseSpec(mustJSON(t, m))
	require.NoError(t, err)
	in := s.IOConfig.InputFormat
	require.Equal(t, "kafka.timestamp", in.TimestampColumnName)
	require.Equal(t, "kafka.topic", in.TopicColumnName)
	require.Equal(t, "kafka.key", in.KeyColumnName)
	require.Equal(t, "kafka.header.", in.HeaderColumnPrefix)
	require.Equal(t, domain.InputJSON, in.ValueFormat.Type)
	require.Empty(t, in.PartitionColumnName+in.OffsetColumnName)
}
