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

// valueSink feeds a decoded record's fields to the parser. A decoder
// names each field of a schema once (Column); the sink remembers what the
// field feeds (its keyInfo), so that records are not looked up field by
// field by name as JSON members are.
type valueSink struct {
	p     *Parser
	cols  []sinkCol
	clock clockCache // decoded_time.go
}

type sinkCol struct {
	ki    keyInfo
	known bool // ki is what lookupKey finds for the field
}

func newValueSink(p *Parser) *valueSink { return &valueSink{p: p} }

func (s *valueSink) Column(name string) (int, bool) {
	var c sinkCol
	if p := s.p; !p.discover || !p.topFields {
		ki, ok := p.lookupKey(name)
		if !ok {
			return 0, false
		}
		c = sinkCol{ki: ki, known: true} // without discovery keys are fixed from New on
	}
	s.cols = append(s.cols, c)
	return len(s.cols) - 1, true
}

// Field sets the field as setTop would. With discovery, a field met for
// the first time, or whose dimension a failed message took back (forget),
// goes through setTop, and its keyInfo is remembered again.
func (s *valueSink) Field(col int, name string, v decode.Value) error {
	p, c, f := s.p, &s.cols[col], fieldOf(v)
	if !c.known || c.ki.dim >= 0 && (c.ki.dim >= len(p.dimCols) || p.dimCols[c.ki.dim].Name != name) {
		if err := p.setTop(name, f); err != nil {
			return err
		}
		c.ki, c.known = p.lookupKey(name)
		return nil
	}
	if c.ki.slot >= 0 {
		p.top[c.ki.slot] = f
	}
	if c.ki.dim >= 0 {
		p.setDim(c.ki.dim, f)
	}
	return nil
}

func (s *valueSink) Scalar(v decode.Value) error {
	return unparseable("", "the value is %s, not a record: rows are made of a record's fields", describe(fieldOf(v)))
}

// fieldOf is a decoded value as the JSON path's field: decode's kinds
// are the parser's, number for number (held at compile time below).
func fieldOf(v decode.Value) field { return field{text: v.Text, kind: kind(v.Kind)} }

// Each index is 0 when the two kinds agree, else out of range (or an
// overflow) and the package does not compile.
var _ = [1]struct{}{}[kindNull-kind(decode.Null)+kindString-kind(decode.String)+kindNumber-kind(decode.Number)+
	kindBool-kind(decode.Bool)+kindObject-kind(decode.Object)+kindArray-kind(decode.Array)+kindTime-kind(decode.Time)]

// parseDecoded reads one binary record.
func (p *Parser) parseDecoded(value []byte, now time.Time) error {
	// The decoders hand over valid UTF-8 only (internal/decode); the
	// kafka format's own fields (headers) are not checked yet.
	p.badUTF8 = p.kafka != nil
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
