package parse

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"handoff/internal/decode"
	"handoff/internal/domain"
	"handoff/internal/registry"
)

// Binary formats (internal/decode) hand the parser a record's top-level
// fields one by one, each as the JSON path's field: a string's content, a
// number's text, a nested record's compact JSON (which flattenSpec paths
// walk as they walk JSON), or a kindTime. From there a decoded record is a
// JSON record: setTop, then finishRow.

// newDecoder builds the value decoder of a binary format: it opens the
// registry client (shared, no request made) or parses the inline schema.
func newDecoder(in domain.InputFormat, path string, opts decode.Options) (decode.Decoder, func([]byte) ([]byte, error), error) {
	var bd *domain.BytesDecoder
	field := ""
	switch in.Type {
	case domain.InputAvroStream:
		bd, field = in.AvroBytesDecoder, ".avroBytesDecoder"
	case domain.InputProtobuf:
		bd, field = in.ProtoBytesDecoder, ".protoBytesDecoder"
	case domain.InputJSONSchema:
		bd, field = in.JSONBytesDecoder, ".jsonBytesDecoder"
	}
	if bd == nil {
		return nil, nil, &domain.FieldError{Path: path + field, Msg: "required"}
	}
	if bd.Type == domain.DecoderSchemaInline && in.Type == domain.InputAvroStream {
		d, err := decode.NewAvroInline(string(bd.Schema), opts)
		if err != nil {
			return nil, nil, &domain.FieldError{Path: path + field + ".schema", Msg: err.Error()}
		}
		return d, nil, nil
	}
	if bd.Type != domain.DecoderSchemaRegistry {
		return nil, nil, &domain.FieldError{Path: path + field + ".type", Msg: fmt.Sprintf("%q: want schema_registry", bd.Type)}
	}
	reg, err := registry.Open(registry.Config{URLs: bd.RegistryURLs(), Config: bd.Config, Headers: bd.Headers})
	if err != nil {
		return nil, nil, &domain.FieldError{Path: path + field, Msg: err.Error()}
	}
	switch in.Type {
	case domain.InputAvroStream:
		return decode.NewAvroRegistry(reg, opts), nil, nil
	case domain.InputProtobuf:
		return decode.NewProtobufRegistry(reg, opts), nil, nil
	}
	return nil, decode.NewJSONSchemaRegistry(reg).Unframe, nil
}

// numericFields are the fields the spec reads as numbers, for the
// decoders' evolution check.
func numericFields(ds domain.DataSchema) []string {
	var out []string
	for _, d := range ds.DimensionsSpec.Dimensions {
		if d.Type == domain.TypeLong || d.Type == domain.TypeDouble {
			out = append(out, d.Name)
		}
	}
	for _, m := range ds.MetricsSpec {
		if m.FieldName != "" && m.Type != domain.MetricCount && m.Type != domain.MetricHyperUnique {
			out = append(out, m.FieldName)
		}
	}
	return out
}

// valueSink feeds a decoded record's fields to the parser.
type valueSink struct{ p *Parser }

func (s valueSink) Wants(name string) bool {
	if s.p.discover && s.p.topFields {
		return true
	}
	_, ok := s.p.lookupKey(name)
	return ok
}

func (s valueSink) Field(name string, v decode.Value) error { return s.p.setTop(name, fieldOf(v)) }

func (s valueSink) Scalar(v decode.Value) error {
	return unparseable("", "the value is %s, not a record: rows are made of a record's fields", describe(fieldOf(v)))
}

// fieldOf is a decoded value as the JSON path's field.
func fieldOf(v decode.Value) field {
	switch v.Kind {
	case decode.String:
		return field{text: v.Text, kind: kindString}
	case decode.Number:
		return field{text: v.Text, kind: kindNumber}
	case decode.Bool:
		return field{text: v.Text, kind: kindBool}
	case decode.Object:
		return field{text: v.Text, kind: kindObject}
	case decode.Array:
		return field{text: v.Text, kind: kindArray}
	case decode.Time:
		return field{text: v.Text, kind: kindTime}
	}
	return field{kind: kindNull}
}

// parseDecoded reads one binary record.
func (p *Parser) parseDecoded(value []byte, now time.Time) error {
	p.beginRow()
	if err := p.dec.Decode(value, p.sink); err != nil {
		return decodeError(err)
	}
	reject, err := p.finishRow(now)
	if err != nil {
		return err
	}
	if reject != nil {
		return reject
	}
	return nil
}

// parseFramedJSON reads a JSON Schema framed value: its JSON, as JSON.
func (p *Parser) parseFramedJSON(value []byte, now time.Time) error {
	payload, err := p.unframe(value)
	if err != nil {
		return decodeError(err)
	}
	return p.parseJSON(unsafe.String(unsafe.SliceData(payload), len(payload)), now)
}

// decodeError makes a bad message unparseable, with the decoder's reason;
// anything else (the registry out of reach) is no fault of the message and
// passes as it is, for the caller to retry.
func decodeError(err error) error {
	var de *decode.Error
	var bad *UnparseableError
	switch {
	case errors.As(err, &de):
		return unparseable("", "%s", de.Msg)
	case errors.As(err, &bad):
		return bad
	}
	return err
}

// IsUnavailable reports whether a Parse error is the schema registry out
// of reach (or refusing the credentials): not a bad row; the caller stops
// and retries later.
func IsUnavailable(err error) bool {
	var un *registry.UnavailableError
	return errors.As(err, &un)
}
