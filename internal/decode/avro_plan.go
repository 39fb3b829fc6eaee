package decode

import (
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/hamba/avro/v2"
	"github.com/modern-go/reflect2"
)

// An avroPlan is how one decoder reads the records of one writer's
// schema. hamba/avro decodes each record into a Go struct built for that
// schema (reflect.StructOf) and reused from record to record: one struct
// field per top-level field the sink wants, so that hamba skips the
// others without decoding them; scalars (and unions of null and a scalar)
// as typed fields, so that no map and no interface is made per record;
// everything else (records, arrays, maps, other unions, decimals,
// durations) as `any`, which hamba fills as it fills a generic record's
// fields, rendered by avroText.value as before. Strings are hamba's,
// copied out of the message into its reader's slab: the texts handed to
// the sink stay valid after the next record.
//
// A schema that is not a record is decoded the same way into a value of
// one column.
type avroPlan struct {
	dec  avro.ValDecoder // hamba's decoder of the schema into the value
	val  reflect.Value   // the reused value (kept: base points into it)
	base unsafe.Pointer  // the value's address
	cols []avroCol
	anys []uintptr // offsets of the `any` columns, cleared before each record
}

// colKind is the Go type a column is decoded into.
type colKind uint8

const (
	colAny      colKind = iota // any: hamba's generic value
	colBool                    // bool
	colInt                     // int (Avro int)
	colLong                    // int64
	colFloat                   // float32
	colDouble                  // float64
	colString                  // string (strings, enums)
	colBytes                   // []byte
	colFixed                   // [size]byte
	colMillis                  // int64 (timestamp-millis)
	colMicros                  // int64 (timestamp-micros)
	colTime                    // time.Time (date, local-timestamp-*)
	colDuration                // time.Duration (time-millis, time-micros)
)

var colTypes = [...]reflect.Type{
	colAny: reflect.TypeFor[any](), colBool: reflect.TypeFor[bool](), colInt: reflect.TypeFor[int](),
	colLong: reflect.TypeFor[int64](), colFloat: reflect.TypeFor[float32](), colDouble: reflect.TypeFor[float64](),
	colString: reflect.TypeFor[string](), colBytes: reflect.TypeFor[[]byte](),
	colMillis: reflect.TypeFor[int64](), colMicros: reflect.TypeFor[int64](), colTime: reflect.TypeFor[time.Time](),
	colDuration: reflect.TypeFor[time.Duration](),
}

// avroCol is one column of a plan.
type avroCol struct {
	name   string
	col    int         // the sink's number for it
	schema avro.Schema // the field's type; of a nullable union, its other branch
	off    uintptr
	kind   colKind
	size   int  // colFixed: the fixed size
	ptr    bool // a union with null: the struct holds a pointer, nil for null
}

// newAvroPlan builds the plan of schema s for the fields the sink reads
// (column: Sink.Column).
func newAvroPlan(s avro.Schema, fields []*avro.Field, column func(string) (int, bool)) *avroPlan {
	var cols []avroCol
	var sf []reflect.StructField
	if fields == nil {
		cols = []avroCol{columnOf("", s)}
	} else {
		for i, f := range fields {
			col, ok := column(f.Name())
			if !ok {
				continue
			}
			cols = append(cols, columnOf(f.Name(), f.Type()))
			cols[len(cols)-1].col = col
			sf = append(sf, reflect.StructField{
				Name: "F" + strconv.Itoa(i), // hamba matches by the tag; the name says which field failed
				Type: cols[len(cols)-1].goType(),
				Tag:  reflect.StructTag(`avro:"` + f.Name() + `"`),
			})
		}
	}
	var v reflect.Value
	if fields == nil {
		v = reflect.New(cols[0].goType())
	} else {
		typ := reflect.StructOf(sf)
		v = reflect.New(typ)
		for i := range cols {
			cols[i].off = typ.Field(i).Offset
		}
	}
	p := &avroPlan{dec: avroAPI.DecoderOf(s, reflect2.Type2(v.Type())), val: v, base: v.UnsafePointer(), cols: cols}
	for _, c := range cols {
		if c.kind == colAny {
			p.anys = append(p.anys, c.off)
		}
	}
	return p
}

// columnOf says how a field of type s is decoded.
func columnOf(name string, s avro.Schema) avroCol {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if u, ok := s.(*avro.UnionSchema); ok && u.Nullable() {
		_, i := u.Indices()
		if c := columnOf(name, u.Types()[i]); c.kind != colAny {
			c.ptr = true
			return c
		}
		return avroCol{name: name, schema: s}
	}
	c := avroCol{name: name, schema: s, kind: scalarKind(s)}
	if c.kind == colFixed {
		c.size = s.(*avro.FixedSchema).Size()
	}
	return c
}

// scalarKind is the column kind of a schema: hamba's generic type for
// it (what it decodes into `any`), or the number a timestamp is written
// as, or colAny.
func scalarKind(s avro.Schema) colKind {
	lt := logical(s)
	switch s.Type() {
	case avro.Boolean:
		return colBool
	case avro.Int:
		switch lt {
		case "":
			return colInt
		case avro.Date:
			return colTime
		case avro.TimeMillis:
			return colDuration
		}
	case avro.Long:
		switch lt {
		case "":
			return colLong
		case avro.TimestampMillis:
			return colMillis
		case avro.TimestampMicros:
			return colMicros
		case avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			return colTime
		case avro.TimeMicros:
			return colDuration
		}
	case avro.Float:
		return colFloat
	case avro.Double:
		return colDouble
	case avro.String, avro.Enum:
		return colString
	case avro.Bytes:
		if lt == "" {
			return colBytes
		}
	case avro.Fixed:
		if lt == "" {
			return colFixed
		}
	}
	return colAny
}

func (c *avroCol) goType() reflect.Type {
	t := colTypes[c.kind]
	if c.kind == colFixed {
		t = reflect.ArrayOf(c.size, reflect.TypeFor[byte]())
	}
	if c.ptr {
		t = reflect.PointerTo(t)
	}
	return t
}

// decode reads one record into the plan's value (as r.ReadVal would,
// without looking the decoder up every time).
func (p *avroPlan) decode(r *avro.Reader) {
	for _, off := range p.anys {
		*(*any)(unsafe.Add(p.base, off)) = nil // as a fresh generic value: nothing of the last record reused
	}
	p.dec.Decode(p.base, r)
}

// render renders column c of the record decoded last.
func (t *avroText) render(p *avroPlan, c *avroCol) Value {
	at := unsafe.Add(p.base, c.off)
	if c.ptr {
		if at = *(*unsafe.Pointer)(at); at == nil {
			return Value{Kind: Null}
		}
	}
	switch c.kind {
	case colBool:
		return boolValue(*(*bool)(at))
	case colInt:
		return t.int(int64(*(*int)(at)))
	case colLong:
		return t.int(*(*int64)(at))
	case colFloat:
		return t.float(float64(*(*float32)(at)), 32)
	case colDouble:
		return t.float(*(*float64)(at), 64)
	case colString:
		return t.str(*(*string)(at))
	case colBytes:
		return t.bytes(*(*[]byte)(at), t.binaryAsString)
	case colFixed:
		return t.bytes(unsafe.Slice((*byte)(at), c.size), t.binaryAsString)
	case colMillis:
		sec, ms := floorDiv(*(*int64)(at), 1e3)
		return t.instant(sec, int(ms)*1e6)
	case colMicros:
		sec, us := floorDiv(*(*int64)(at), 1e6)
		return t.instant(sec, int(us)*1e3)
	case colTime:
		return t.timeOf(c.schema, *(*time.Time)(at))
	case colDuration:
		return t.duration(*(*time.Duration)(at))
	}
	return t.value(c.schema, *(*any)(at))
}

// fieldError says why hamba failed, and on which field: its errors name
// the struct field (F<index in the schema>), which is not the user's
// name; running out of bytes is said in words.
func fieldError(fields []*avro.Field, err error) string {
	if errors.Is(err, io.EOF) {
		return "the value ends before the record does (" + err.Error() + "): truncated, or written with another schema?"
	}
	msg := err.Error()
	rest, ok := strings.CutPrefix(msg, "F")
	if !ok || fields == nil {
		return msg
	}
	num, tail, ok := strings.Cut(rest, ": ")
	i, err2 := strconv.Atoi(num)
	if !ok || err2 != nil || i < 0 || i >= len(fields) {
		return msg
	}
	return "field " + strconv.Quote(fields[i].Name()) + ": " + tail
}
