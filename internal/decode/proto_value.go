package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// protoText renders decoded Protobuf messages (dynamicpb) field by field:
// proto field names, enums by name, int64 as numbers (not strings, as
// protojson would), well-known types as their JSON mapping except
// google.protobuf.Timestamp, which is a Time, and the wrappers, which are
// their value.
type protoText struct {
	text
	binaryAsString bool
}

// set reports whether a field is there to read: a field with presence
// (proto2 and proto3 optional, messages, oneof members) when it is set; a
// list or map when it has entries; a proto3 scalar always (its default is
// its value: 0 is a count, not a missing one).
func set(m protoreflect.Message, fd protoreflect.FieldDescriptor) bool {
	switch {
	case fd.IsList() || fd.IsMap():
		return m.Has(fd)
	case fd.HasPresence():
		return m.Has(fd)
	}
	return true
}

// field renders a top-level field.
func (t *protoText) field(fd protoreflect.FieldDescriptor, v protoreflect.Value) Value {
	start := len(t.b)
	switch {
	case fd.IsList():
		t.list(fd, v.List())
		return Value{Kind: Array, Text: t.since(start)}
	case fd.IsMap():
		t.mapValue(fd, v.Map())
		return Value{Kind: Object, Text: t.since(start)}
	}
	return t.single(fd, v)
}

// single renders one value of a singular field (or one element).
func (t *protoText) single(fd protoreflect.FieldDescriptor, v protoreflect.Value) Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return boolValue(v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return t.int(v.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return t.uint(v.Uint())
	case protoreflect.FloatKind:
		return t.float(v.Float(), 32)
	case protoreflect.DoubleKind:
		return t.float(v.Float(), 64)
	case protoreflect.StringKind:
		return t.str(v.String())
	case protoreflect.BytesKind:
		return t.bytes(v.Bytes(), t.binaryAsString)
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return Value{Kind: String, Text: string(ev.Name())}
		}
		return t.int(int64(v.Enum()))
	}
	return t.message(v.Message())
}

// message renders a message value: a well-known type by its mapping, any
// other as a JSON object.
func (t *protoText) message(m protoreflect.Message) Value {
	md := m.Descriptor()
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		f := md.Fields()
		ts := time.Unix(m.Get(f.ByName("seconds")).Int(), m.Get(f.ByName("nanos")).Int())
		return t.time(ts)
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
		"google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
		fd := md.Fields().ByName("value")
		return t.single(fd, m.Get(fd))
	}
	if md.FullName().Parent() == "google.protobuf" {
		return t.wellKnown(m)
	}
	start := len(t.b)
	t.object(m)
	return Value{Kind: Object, Text: t.since(start)}
}

// wellKnown renders the other well-known types (Duration, Struct, Value,
// ListValue, Empty, FieldMask, Any) as protojson does, compacted.
func (t *protoText) wellKnown(m protoreflect.Message) Value {
	b, err := protojson.Marshal(m.Interface())
	if err != nil {
		return Value{Kind: Null}
	}
	start := len(t.b)
	var s string
	switch {
	case len(b) > 0 && b[0] == '"' && json.Unmarshal(b, &s) == nil:
		t.b = append(t.b, s...)
		return Value{Kind: String, Text: t.since(start)}
	case string(b) == "null":
		return Value{Kind: Null}
	}
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return Value{Kind: Null}
	}
	t.b = append(t.b, c.Bytes()...)
	kind := Object
	switch {
	case len(b) > 0 && b[0] == '[':
		kind = Array
	case len(b) > 0 && (b[0] == 't' || b[0] == 'f'):
		kind = Bool
	case len(b) > 0 && b[0] != '{':
		kind = Number
	}
	return Value{Kind: kind, Text: t.since(start)}
}

// object appends a message as a JSON object of the fields set (set).
func (t *protoText) object(m protoreflect.Message) {
	t.b = append(t.b, '{')
	fields := m.Descriptor().Fields()
	first := true
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !set(m, fd) {
			continue
		}
		if !first {
			t.b = append(t.b, ',')
		}
		first = false
		t.jsonString(string(fd.Name()))
		t.b = append(t.b, ':')
		t.jsonField(fd, m.Get(fd))
	}
	t.b = append(t.b, '}')
}

func (t *protoText) jsonField(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch {
	case fd.IsList():
		t.list(fd, v.List())
	case fd.IsMap():
		t.mapValue(fd, v.Map())
	default:
		t.jsonSingle(fd, v)
	}
}

func (t *protoText) list(fd protoreflect.FieldDescriptor, l protoreflect.List) {
	t.b = append(t.b, '[')
	for i := range l.Len() {
		if i > 0 {
			t.b = append(t.b, ',')
		}
		t.jsonSingle(fd, l.Get(i))
	}
	t.b = append(t.b, ']')
}

// mapValue appends a map as a JSON object, its keys sorted.
func (t *protoText) mapValue(fd protoreflect.FieldDescriptor, m protoreflect.Map) {
	type entry struct {
		k string
		v protoreflect.Value
	}
	entries := make([]entry, 0, m.Len())
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		entries = append(entries, entry{k.String(), v})
		return true
	})
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	t.b = append(t.b, '{')
	for i, e := range entries {
		if i > 0 {
			t.b = append(t.b, ',')
		}
		t.jsonString(e.k)
		t.b = append(t.b, ':')
		t.jsonSingle(fd.MapValue(), e.v)
	}
	t.b = append(t.b, '}')
}

// jsonSingle appends one value as JSON, writing numbers and strings
// straight in; messages are rendered alone first, then copied in.
func (t *protoText) jsonSingle(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		t.b = strconv.AppendBool(t.b, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		t.b = strconv.AppendInt(t.b, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		t.b = strconv.AppendUint(t.b, v.Uint(), 10)
	case protoreflect.StringKind:
		t.jsonString(v.String())
	case protoreflect.BytesKind:
		if t.binaryAsString {
			t.jsonString(string(v.Bytes()))
		} else {
			t.b = append(t.b, '"')
			t.b = base64.StdEncoding.AppendEncode(t.b, v.Bytes())
			t.b = append(t.b, '"')
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if md := v.Message().Descriptor(); md.FullName().Parent() != "google.protobuf" {
			t.object(v.Message())
			return
		}
		fallthrough
	default:
		mark := len(t.b)
		sv := t.single(fd, v)
		s := strings.Clone(sv.Text)
		t.b = t.b[:mark]
		t.jsonValue(Value{Kind: sv.Kind, Text: s})
	}
}
