package domain

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Input formats beyond json and csv, with Druid's names: Avro and Protobuf
// in the Confluent wire format with their schemas from a schema registry
// (or, for Avro, one inline schema), JSON Schema framed JSON, and the
// kafka format, which wraps one of the others and adds the record's own
// timestamp, topic, key, headers, partition and offset as columns.
const (
	InputAvroStream = "avro_stream"
	InputProtobuf   = "protobuf"
	InputJSONSchema = "json_schema"
	InputKafka      = "kafka"
)

// Bytes decoder types (avroBytesDecoder, protoBytesDecoder,
// jsonBytesDecoder).
const (
	DecoderSchemaRegistry = "schema_registry"
	DecoderSchemaInline   = "schema_inline" // Avro only: bare Avro of one schema
)

// The kafka format's column names, as Druid's defaults.
const (
	DefaultKafkaTimestampColumn = "kafka.timestamp"
	DefaultKafkaTopicColumn     = "kafka.topic"
	DefaultKafkaKeyColumn       = "kafka.key"
	DefaultKafkaHeaderPrefix    = "kafka.header."
)

// RecordFormats are the InputFormat fields of the formats in this file.
type RecordFormats struct {
	// AvroBytesDecoder (avro_stream) says where the writer's schema comes
	// from: schema_registry (framed values) or schema_inline. Required.
	AvroBytesDecoder *BytesDecoder `json:"avroBytesDecoder,omitempty"`
	// ProtoBytesDecoder (protobuf): schema_registry. Required.
	ProtoBytesDecoder *BytesDecoder `json:"protoBytesDecoder,omitempty"`
	// JSONBytesDecoder (json_schema): schema_registry. Required.
	JSONBytesDecoder *BytesDecoder `json:"jsonBytesDecoder,omitempty"`
	// BinaryAsString (avro_stream, protobuf): bytes and fixed values are
	// UTF-8 text rather than base64. Default false.
	BinaryAsString bool `json:"binaryAsString,omitempty"`

	// ValueFormat (kafka) parses the record's value: any format but kafka.
	// Required.
	ValueFormat *InputFormat `json:"valueFormat,omitempty"`
	// KeyFormat (kafka) parses the record's key; its first field is the key
	// column. Default: the key's bytes as UTF-8 text.
	KeyFormat *InputFormat `json:"keyFormat,omitempty"`
	// HeaderFormat (kafka) decodes header values: type string, encoding
	// UTF-8 or ISO-8859-1. Default UTF-8.
	HeaderFormat *HeaderFormat `json:"headerFormat,omitempty"`
	// TimestampColumnName (kafka): the record's timestamp, in Unix
	// milliseconds (timestampSpec format millis). Default kafka.timestamp.
	TimestampColumnName string `json:"timestampColumnName,omitempty"`
	// TopicColumnName (kafka): the record's topic. Default kafka.topic.
	TopicColumnName string `json:"topicColumnName,omitempty"`
	// KeyColumnName (kafka): the record's key. Default kafka.key.
	KeyColumnName string `json:"keyColumnName,omitempty"`
	// HeaderColumnPrefix (kafka): each header is a string column named
	// this prefix and the header's key. Default kafka.header.
	HeaderColumnPrefix string `json:"headerColumnPrefix,omitempty"`
	// PartitionColumnName and OffsetColumnName (kafka): the record's
	// partition and offset, as long columns. Default: none.
	PartitionColumnName string `json:"partitionColumnName,omitempty"`
	OffsetColumnName    string `json:"offsetColumnName,omitempty"`
}

// BytesDecoder says where a binary format's schema comes from (Druid's
// avroBytesDecoder and protoBytesDecoder).
type BytesDecoder struct {
	// Type is schema_registry, or schema_inline for Avro.
	Type string `json:"type"`
	// URL or URLs (schema_registry): the registry, tried in order.
	URL  string   `json:"url,omitempty"`
	URLs []string `json:"urls,omitempty"`
	// Config (schema_registry): Confluent client settings,
	// RegistrySettings. Secrets are ${env:NAME} references to the worker's
	// environment, never values.
	Config map[string]string `json:"config,omitempty"`
	// Headers (schema_registry): HTTP headers sent to the registry; an
	// Authorization header must be ${env:NAME}.
	Headers map[string]string `json:"headers,omitempty"`
	// Schema (schema_inline): the Avro schema every value is written with.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// RegistryURLs is URL and URLs together.
func (d *BytesDecoder) RegistryURLs() []string {
	if d.URL == "" {
		return d.URLs
	}
	return append([]string{d.URL}, d.URLs...)
}

// HeaderFormat decodes Kafka header values.
type HeaderFormat struct {
	Type     string `json:"type"`               // string
	Encoding string `json:"encoding,omitempty"` // UTF-8 (default) or ISO-8859-1
}

// The registry settings a spec may give, by their Confluent names.
const (
	RegistryBasicSource = "basic.auth.credentials.source"  // USER_INFO
	RegistryBasicInfo   = "basic.auth.user.info"           // ${env:NAME} holding user:password
	RegistryBearerSrc   = "bearer.auth.credentials.source" // STATIC_TOKEN
	RegistryBearerToken = "bearer.auth.token"              // ${env:NAME} holding the token
)

// RegistrySettings lists what BytesDecoder.Config may hold.
var RegistrySettings = []string{RegistryBasicSource, RegistryBasicInfo, RegistryBearerSrc, RegistryBearerToken}

var envRef = regexp.MustCompile(`^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)

// EnvRef returns NAME of a value "${env:NAME}", "" for any other value.
func EnvRef(v string) string {
	if m := envRef.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return ""
}

// CheckRegistry says what is wrong with a registry's settings (where,
// under the decoder, and what), or "", "". A secret must be an ${env:NAME}
// reference: specs are stored and shown by status.
func CheckRegistry(urls []string, config, headers map[string]string) (where, msg string) {
	if len(urls) == 0 {
		return "url", "required: the schema registry's URL (or urls)"
	}
	for i, u := range urls {
		scheme, rest, _ := strings.Cut(u, "://")
		host, _, _ := strings.Cut(rest, "/")
		switch {
		case scheme != "http" && scheme != "https" || host == "":
			return fmt.Sprintf("urls[%d]", i), fmt.Sprintf("%q: want an http:// or https:// URL", redactUserinfo(u))
		case strings.Contains(host, "@"):
			return fmt.Sprintf("urls[%d]", i), "credentials do not belong in the URL: set config basic.auth.user.info to ${env:NAME}"
		}
	}
	for _, k := range slices.Sorted(mapsKeys(config)) {
		v := config[k]
		switch {
		case !slices.Contains(RegistrySettings, k):
			return "config." + k, fmt.Sprintf("not a setting handoff reads: want one of %s", strings.Join(RegistrySettings, ", "))
		case (k == RegistryBasicInfo || k == RegistryBearerToken) && EnvRef(v) == "":
			return "config." + k, "a secret: give it as ${env:NAME}, a variable of the worker's environment (specs are stored and shown by status)"
		case k == RegistryBasicSource && v != "USER_INFO":
			return "config." + k, fmt.Sprintf("%q: only USER_INFO (basic.auth.user.info) is supported", v)
		case k == RegistryBearerSrc && v != "STATIC_TOKEN":
			return "config." + k, fmt.Sprintf("%q: only STATIC_TOKEN (bearer.auth.token) is supported", v)
		}
	}
	if config[RegistryBasicInfo] != "" && config[RegistryBearerToken] != "" {
		return "config", "basic.auth.user.info and bearer.auth.token: set one or the other"
	}
	for _, h := range slices.Sorted(mapsKeys(headers)) {
		if strings.EqualFold(h, "Authorization") && EnvRef(headers[h]) == "" {
			return "headers." + h, "a secret: give it as ${env:NAME}, a variable of the worker's environment"
		}
	}
	return "", ""
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func redactUserinfo(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, path, hasPath := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = "xxxxx" + host[at:]
	}
	if hasPath {
		return scheme + "://" + host + "/" + path
	}
	return scheme + "://" + host
}
