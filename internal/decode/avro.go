package decode

import (
	"context"
	"errors"
	"fmt"

	"github.com/hamba/avro/v2"

	"handoff/internal/registry"
)

// avroAPI bounds what a malformed message can make the decoder allocate:
// a string, bytes or array length is read from the message itself.
var avroAPI = avro.Config{
	MaxByteSliceSize:  16 << 20,
	MaxSliceAllocSize: 1 << 20,
}.Freeze()

// Avro decodes Avro binary values: framed, with the writer's schema from
// the registry by the frame's id; or bare, with one inline schema (Druid's
// schema_inline).
type Avro struct {
	reg     *registry.Client // nil: inline
	inline  *avroSchema
	opts    Options
	t       avroText
	r       *avro.Reader
	schemas map[int]*avroSchema
}

// avroSchema is a writer's schema ready to decode with; refused, when the
// spec cannot read what it writes (evolution.go).
type avroSchema struct {
	s       avro.Schema
	fields  []*avro.Field // nil when the schema is not a record
	refused *Error
	plan    *avroPlan // avro_plan.go: made at the first record
}

// NewAvroRegistry decodes framed Avro with schemas from reg.
func NewAvroRegistry(reg *registry.Client, opts Options) *Avro {
	return &Avro{reg: reg, opts: opts, t: avroText{binaryAsString: opts.BinaryAsString},
		r: avro.NewReader(nil, 0, avro.WithReaderConfig(avroAPI)), schemas: map[int]*avroSchema{}}
}

// NewAvroInline decodes bare Avro written with schema (its JSON text).
func NewAvroInline(schema string, opts Options) (*Avro, error) {
	s, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("not an Avro schema: %w", err)
	}
	d := &Avro{opts: opts, t: avroText{binaryAsString: opts.BinaryAsString}, r: avro.NewReader(nil, 0, avro.WithReaderConfig(avroAPI))}
	d.inline = newAvroSchema(s)
	return d, nil
}

func newAvroSchema(s avro.Schema) *avroSchema {
	as := &avroSchema{s: s}
	if rec, ok := s.(*avro.RecordSchema); ok {
		as.fields = rec.Fields()
	}
	return as
}

// Decode implements Decoder.
func (d *Avro) Decode(msg []byte, sink Sink) (err error) {
	defer func() {
		if p := recover(); p != nil { // a library bug must not take the worker down
			err = errorf(0, "Avro decoder failed on this message: %v", p)
		}
	}()
	d.t.reset()
	id, payload, s := 0, msg, d.inline
	if d.reg != nil {
		var ferr *Error
		if id, payload, ferr = unframe(msg); ferr != nil {
			return ferr
		}
		if s, err = d.schema(id); err != nil {
			return err
		}
	}
	if s.refused != nil {
		return s.refused
	}
	if s.plan == nil {
		s.plan = newAvroPlan(s.s, s.fields, sink.Column)
	}
	d.r.Error = nil
	d.r.Reset(payload)
	s.plan.decode(d.r)
	if d.r.Error != nil {
		return errorf(id, "not Avro of %s: %s", schemaName(id), fieldError(s.fields, d.r.Error))
	}
	if d.r.Peek(); d.r.Error == nil {
		return errorf(id, "bytes follow the end of the Avro record of %s: written with another schema?", schemaName(id))
	}
	if s.fields == nil {
		return sink.Scalar(d.t.render(s.plan, &s.plan.cols[0]))
	}
	for i := range s.plan.cols {
		c := &s.plan.cols[i]
		if err := sink.Field(c.col, c.name, d.t.render(s.plan, c)); err != nil {
			return err
		}
	}
	return nil
}

func schemaName(id int) string {
	if id == 0 {
		return "the inline schema"
	}
	return fmt.Sprintf("schema id %d", id)
}

// schema returns the writer's schema of id, compiled once per process
// (registry.Schema.Memo) and checked against the schemas seen before.
func (d *Avro) schema(id int) (*avroSchema, error) {
	if s, ok := d.schemas[id]; ok {
		return s, nil
	}
	rs, err := d.reg.Schema(context.Background(), id)
	var nf *registry.NotFoundError
	switch {
	case errors.As(err, &nf):
		return nil, &Error{SchemaID: id, Msg: nf.Error()}
	case err != nil:
		return nil, err
	}
	if rs.Type != 0 { // sr.TypeAvro
		return nil, errorf(id, "schema id %d is %s schema, not Avro: the spec's input format is avro_stream", id, typeName(rs))
	}
	v, err := rs.Memo("avro", func() (any, error) { return parseAvro(rs) })
	if err != nil {
		return nil, errorf(id, "schema id %d is not a valid Avro schema: %v", id, err)
	}
	s := newAvroSchema(v.(avro.Schema))
	if s.fields != nil && len(d.opts.Numeric) > 0 {
		if s.refused, err = d.evolution(rs, s); err != nil {
			return nil, err
		}
	}
	d.schemas[id] = s
	return s, nil
}

// evolution refuses s when it changes a field the spec reads as a number
// from the version before it (evolution.go).
func (d *Avro) evolution(rs *registry.Schema, s *avroSchema) (*Error, error) {
	prev, err := d.reg.Previous(context.Background(), rs)
	if err != nil || prev == nil {
		return nil, err
	}
	pv, err := prev.Memo("avro", func() (any, error) { return parseAvro(prev) })
	if err != nil {
		return nil, nil // nothing to compare with
	}
	rec := s.s.(*avro.RecordSchema)
	prec, ok := pv.(*avro.RecordSchema)
	if !ok {
		return nil, nil
	}
	return evolve(rs.ID, prev.ID, rec.FullName(), avroKinds(prec.Fields()), avroKinds(s.fields), d.opts.Numeric), nil
}

// parseAvro parses a registry schema with the named types its references
// define, each reference first.
func parseAvro(rs *registry.Schema) (avro.Schema, error) {
	cache := &avro.SchemaCache{}
	var add func(s *registry.Schema) error
	add = func(s *registry.Schema) error {
		for _, ref := range s.References {
			if err := add(ref.Schema); err != nil {
				return err
			}
			if _, err := avro.ParseWithCache(ref.Schema.Text, "", cache); err != nil {
				return fmt.Errorf("reference %q (subject %s version %d): %w", ref.Name, ref.Subject, ref.Version, err)
			}
		}
		return nil
	}
	if err := add(rs); err != nil {
		return nil, err
	}
	return avro.ParseWithCache(rs.Text, "", cache)
}

// avroKinds describes each top-level field's type for the evolution
// check: "number" for every numeric type (nullable or not), else the
// Avro type.
func avroKinds(fields []*avro.Field) map[string]string {
	kinds := make(map[string]string, len(fields))
	for _, f := range fields {
		kinds[f.Name()] = avroKind(f.Type())
	}
	return kinds
}

func avroKind(s avro.Schema) string {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		kind := ""
		for _, b := range u.Types() {
			if b.Type() == avro.Null {
				continue
			}
			if k := avroKind(b); kind == "" || kind == k {
				kind = k
			} else {
				return "union"
			}
		}
		return kind
	}
	switch s.Type() {
	case avro.Int, avro.Long, avro.Float, avro.Double:
		if lt := logical(s); lt != "" && lt != avro.Decimal {
			return string(lt)
		}
		return kindNumber
	case avro.Bytes, avro.Fixed:
		if logical(s) == avro.Decimal {
			return kindNumber
		}
	}
	return string(s.Type())
}
