package decode

import (
	"context"
	"errors"

	"handoff/internal/registry"
)

// JSONSchema unframes JSON Schema values (Confluent's JSON Schema
// serializer: the 5-byte frame, then JSON text): the schema id must be a
// JSON Schema the registry knows; the JSON itself is the parser's to read,
// as any JSON value. The schema is not used to validate the value
// (Confluent's deserializer does not by default either): the spec's
// dimensions and metrics say what must be there.
type JSONSchema struct {
	reg   *registry.Client
	known map[int]bool
}

// NewJSONSchemaRegistry unframes values whose schemas are in reg.
func NewJSONSchemaRegistry(reg *registry.Client) *JSONSchema {
	return &JSONSchema{reg: reg, known: map[int]bool{}}
}

// Unframe returns the JSON of a framed value. Errors are *Error and
// *registry.UnavailableError, as Decode's.
func (d *JSONSchema) Unframe(msg []byte) ([]byte, error) {
	id, payload, ferr := unframe(msg)
	if ferr != nil {
		return nil, ferr
	}
	if d.known[id] {
		return payload, nil
	}
	rs, err := d.reg.Schema(context.Background(), id)
	var nf *registry.NotFoundError
	switch {
	case errors.As(err, &nf):
		return nil, &Error{SchemaID: id, Msg: nf.Error()}
	case err != nil:
		return nil, err
	case rs.Type != 2: // sr.TypeJSON
		return nil, errorf(id, "schema id %d is %s schema, not JSON Schema: the spec's input format is json_schema", id, typeName(rs))
	}
	d.known[id] = true
	return payload, nil
}
