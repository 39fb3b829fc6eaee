// Package decode turns binary Kafka message values into the fields the
// parser (internal/parse) makes rows of: Avro and Protobuf in the
// Confluent wire format with their schemas from a schema registry
// (internal/registry), Avro with an inline schema, and JSON Schema framed
// JSON. Decoding is the libraries' (github.com/hamba/avro/v2,
// google.golang.org/protobuf with github.com/bufbuild/protocompile for
// schemas given as text); this package maps what they decode onto the
// JSON path's model, so that timestampSpec, dimensions, discovery,
// flattenSpec, metrics and rejection treat an Avro or Protobuf record
// exactly as the same record in JSON:
//
//   - A record's top-level fields go to a Sink one by one, in schema order.
//   - Scalars keep their kind: strings (enums as their symbol, bytes as
//     base64), numbers as decimal text, booleans, null.
//   - Timestamps (Avro timestamp-*, date; Protobuf google.protobuf.Timestamp)
//     are Time values: RFC 3339 text in UTC that timestampSpec reads
//     whatever its format.
//   - Nested records, maps and arrays are compact JSON text, which the
//     parser's flattenSpec paths walk as they walk JSON.
//
// docs/DATA.md has the whole type mapping. The texts a Decode hands over
// are views into the decoder's buffers, valid until its next Decode, and
// valid UTF-8: invalid sequences in strings (and in bytes read as text)
// are replaced by U+FFFD, as the JSON path replaces them; field names
// are the schema's, which Avro and Protobuf restrict to identifiers.
package decode

import "fmt"

// Kind is a value's kind, as the parser's JSON model has them.
type Kind uint8

const (
	Null Kind = iota + 1
	String
	Number
	Bool
	Object
	Array
	// Time is an instant (or a date) as RFC 3339 text in UTC.
	Time
)

// Value is one decoded value. Text is a string's content, a number's
// decimal text, "true" or "false", an object's or array's compact JSON,
// or a time's RFC 3339 text; empty for Null.
type Value struct {
	Kind Kind
	Text string
}

// Sink receives what one message holds.
type Sink interface {
	// Column is asked once per schema (per message type) for each of its
	// top-level fields: whether the field is read at all (ok false: the
	// decoder need not decode it), and a number of the sink's choosing
	// that Field is given with the field's values.
	Column(name string) (col int, ok bool)
	// Field receives one top-level field of a record, in schema order, with
	// the number Column gave it.
	Field(col int, name string, v Value) error
	// Scalar receives a message whose schema is not a record (an Avro
	// string, say): keys may be, values may not.
	Scalar(v Value) error
}

// Error says why a message cannot be decoded: a bad frame, a schema id the
// registry does not know, bytes that do not match the schema. The record
// is unparseable.
type Error struct {
	// SchemaID is the frame's schema id, 0 when the frame has none.
	SchemaID int
	Msg      string
}

func (e *Error) Error() string { return e.Msg }

func errorf(id int, format string, args ...any) *Error {
	return &Error{SchemaID: id, Msg: fmt.Sprintf(format, args...)}
}

// Decoder decodes one message at a time. It is not safe for concurrent
// use: one per parser. Its errors are *Error for a bad message and
// *registry.UnavailableError when the schema cannot be fetched now.
type Decoder interface {
	Decode(msg []byte, sink Sink) error
}

// Options are what a decoder needs of the spec besides its format.
type Options struct {
	// BinaryAsString: bytes and fixed values are UTF-8 text rather than
	// base64 (Druid's binaryAsString).
	BinaryAsString bool
	// Numeric names the top-level fields the spec reads as numbers
	// (long or double dimensions, sum/min/max metrics): a schema that
	// changes one of them from a number to something else is refused
	// (evolution.go).
	Numeric []string
}
