package decode

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

const eventProto = `syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/duration.proto";
message Other { string x = 1; }
message Event {
  string id = 1;
  int64 n = 2;
  uint32 u = 3;
  double d = 4;
  float f = 5;
  bool b = 6;
  bytes raw = 7;
  enum Color { RED = 0; GREEN = 1; }
  Color color = 8;
  repeated string tags = 9;
  map<string, int64> attrs = 10;
  User user = 11;
  google.protobuf.Timestamp ts = 12;
  google.protobuf.Int64Value maybe = 13;
  oneof choice { string text = 14; int32 num = 15; }
  optional string opt = 16;
  google.protobuf.Struct meta = 17;
  google.protobuf.Duration took = 18;
  int32 zero = 19;
  google.protobuf.StringValue unset = 20;
  message User { string name = 1; int32 age = 2; repeated User friends = 3; }
}`

// protoMessage compiles a schema with protocompile (the library, as a
// producer's build would) and fills a message of it from protojson.
func protoMessage(t *testing.T, schema, name, js string) []byte {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: func(p string) (io.ReadCloser, error) {
			if p == "test.proto" {
				return io.NopCloser(strings.NewReader(schema)), nil
			}
			return nil, os.ErrNotExist
		},
	})}
	files, err := c.Compile(context.Background(), "test.proto")
	require.NoError(t, err)
	md := files[0].FindDescriptorByName(protoreflect.FullName(name)).(protoreflect.MessageDescriptor)
	m := dynamicpb.NewMessage(md)
	require.NoError(t, protojson.Unmarshal([]byte(js), m))
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	return b
}

func rawEnc(b []byte) func(any) ([]byte, error) { return func(any) ([]byte, error) { return b, nil } }

func TestProtobufEveryKind(t *testing.T) {
	reg, c := newRegistry(t)
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: eventProto, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	body := protoMessage(t, eventProto, "t.Event", `{
	  "id": "e-1", "n": "-9007199254740993", "u": 7, "d": 0.1, "f": 1.5, "b": true, "raw": "AAH/",
	  "color": "GREEN", "tags": ["a","b"], "attrs": {"z": "1", "a": "2"},
	  "user": {"name": "ann", "age": 41, "friends": [{"name": "bo"}]},
	  "ts": "2024-05-01T12:30:45.123456Z", "maybe": "5", "text": "hi",
	  "meta": {"k": [1, "x", null]}, "took": "1.500s"}`)
	msg := frame(t, id, []int{1}, nil, rawEnc(body))
	var got collect
	require.NoError(t, NewProtobufRegistry(c, Options{}).Decode(msg, &got))
	require.Equal(t, []string{
		"id=string:e-1", "n=number:-9007199254740993", "u=number:7", "d=number:0.1", "f=number:1.5", "b=bool:true",
		"raw=string:AAH/", "color=string:GREEN", `tags=array:["a","b"]`, `attrs=object:{"a":2,"z":1}`,
		`user=object:{"name":"ann","age":41,"friends":[{"name":"bo","age":0}]}`,
		"ts=time:2024-05-01T12:30:45.123456Z", "maybe=number:5", "text=string:hi",
		`meta=object:{"k":[1,"x",null]}`, "took=string:1.500s", "zero=number:0",
	}, got.fields, "unset optional, oneof sibling and wrapper are missing; a proto3 scalar's default is its value")
}

func TestProtobufFirstMessageByDefault(t *testing.T) {
	reg, c := newRegistry(t)
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: eventProto, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	body := protoMessage(t, eventProto, "t.Other", `{"x": "only"}`)
	var got collect
	require.NoError(t, NewProtobufRegistry(c, Options{}).Decode(frame(t, id, []int{0}, nil, rawEnc(body)), &got))
	require.Equal(t, []string{"x=string:only"}, got.fields)
}

func TestProtobufReferences(t *testing.T) {
	reg, c := newRegistry(t)
	_, _, err := reg.RegisterSchema("user", sr.Schema{Type: sr.TypeProtobuf, Schema: `syntax = "proto3"; package u; message User { string name = 1; }`})
	require.NoError(t, err)
	const outer = `syntax = "proto3"; package o; import "user.proto"; message Visit { u.User who = 1; string page = 2; }`
	id, _, err := reg.RegisterSchema("visits-value", sr.Schema{Type: sr.TypeProtobuf, Schema: outer,
		References: []sr.SchemaReference{{Name: "user.proto", Subject: "user", Version: 1}}})
	require.NoError(t, err)
	body, err := proto.Marshal(func() proto.Message {
		c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{Accessor: func(p string) (io.ReadCloser, error) {
			switch p {
			case "v.proto":
				return io.NopCloser(strings.NewReader(outer)), nil
			case "user.proto":
				return io.NopCloser(strings.NewReader(`syntax = "proto3"; package u; message User { string name = 1; }`)), nil
			}
			return nil, os.ErrNotExist
		}})}
		files, err := c.Compile(context.Background(), "v.proto")
		require.NoError(t, err)
		m := dynamicpb.NewMessage(files[0].Messages().Get(0))
		require.NoError(t, protojson.Unmarshal([]byte(`{"who":{"name":"ann"},"page":"p"}`), m))
		return m
	}())
	require.NoError(t, err)
	var got collect
	require.NoError(t, NewProtobufRegistry(c, Options{}).Decode(frame(t, id, []int{0}, nil, rawEnc(body)), &got))
	require.Equal(t, []string{`who=object:{"name":"ann"}`, "page=string:p"}, got.fields)
}

func TestProtobufBadMessagesSayWhy(t *testing.T) {
	reg, c := newRegistry(t)
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: eventProto, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	aid, _, err := reg.RegisterSchema("a-value", sr.Schema{Schema: `{"type":"string"}`})
	require.NoError(t, err)
	good := frame(t, id, []int{1}, nil, rawEnc(protoMessage(t, eventProto, "t.Event", `{"id":"x"}`)))
	for _, tc := range []struct {
		name string
		msg  []byte
		want string
	}{
		{"wrong magic", []byte{1, 0, 0, 0, 1, 0}, "wrong magic byte 0x01"},
		{"truncated frame", []byte{0, 0, 0, 0}, "truncated frame: 4 bytes"},
		{"no index list", []byte{0, 0, 0, 0, byte(id)}, "no Protobuf message-index list"},
		{"bad index count", []byte{0, 0, 0, 0, byte(id), 0x03}, "bad Protobuf message-index count -2"},
		{"index past the file", []byte{0, 0, 0, 0, byte(id), 0x02, 0x0a}, "message index [5] does not name a message"},
		{"unknown id", []byte{0, 0, 0, 0x7f, 0, 0}, "not in the schema registry (404)"},
		{"garbage", append(good[:7:7], 0xff, 0xff, 0xff), "not Protobuf t.Event of schema id"},
		{"an avro schema", []byte{0, 0, 0, 0, byte(aid), 0}, "is an Avro schema, not Protobuf"},
		// meta (a Struct): a map entry whose key comes again as a fixed64,
		// on which protobuf-go panics (FuzzProtobuf found it).
		{"map key twice", append(good[:6:6], "\x02\x8a\x01\x10\n\x0e\n\x010\t0000000000"...), "not Protobuf t.Event of schema id " + itoa(id) + ": malformed (protobuf-go failed on it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := NewProtobufRegistry(c, Options{}).Decode(tc.msg, &collect{})
			var de *Error
			require.ErrorAs(t, err, &de)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, NewProtobufRegistry(c, Options{}).Decode(good, &collect{}))

	// A decoder that met one keeps decoding good messages.
	d := NewProtobufRegistry(c, Options{})
	require.Error(t, d.Decode(append(good[:6:6], "\x02\x8a\x01\x10\n\x0e\n\x010\t0000000000"...), &collect{}))
	var got collect
	require.NoError(t, d.Decode(good, &got))
	require.Equal(t, []string{"id=string:x", "n=number:0", "u=number:0", "d=number:0", "f=number:0", "b=bool:false", "raw=string:", "color=string:RED", "zero=number:0"}, got.fields, "nothing of the bad message (its meta) left")
}

func TestProtobufEvolution(t *testing.T) {
	reg, c := newRegistry(t)
	require.NoError(t, reg.SetCompat("m-value", sr.CompatNone))
	v1 := `syntax = "proto3"; message M { string id = 1; int64 delta = 2; }`
	v2 := `syntax = "proto3"; message M { string id = 1; int64 delta = 2; string lang = 3; }`
	v3 := `syntax = "proto3"; message M { string id = 1; string delta = 2; string lang = 3; }`
	var ids []int
	for _, s := range []string{v1, v2, v3} {
		id, _, err := reg.RegisterSchema("m-value", sr.Schema{Schema: s, Type: sr.TypeProtobuf})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	d := NewProtobufRegistry(c, Options{Numeric: []string{"delta"}})
	require.NoError(t, d.Decode(frame(t, ids[0], []int{0}, nil, rawEnc(protoMessage(t, v1, "M", `{"id":"a","delta":"1"}`))), &collect{}))
	require.NoError(t, d.Decode(frame(t, ids[1], []int{0}, nil, rawEnc(protoMessage(t, v2, "M", `{"id":"b","delta":"2","lang":"fr"}`))), &collect{}))
	err := d.Decode(frame(t, ids[2], []int{0}, nil, rawEnc(protoMessage(t, v3, "M", `{"id":"c","delta":"x"}`))), &collect{})
	require.ErrorContains(t, err, `changes field "delta" of M from a number (schema id `+itoa(ids[1])+`) to string`)
}

func TestJSONSchemaUnframes(t *testing.T) {
	reg, c := newRegistry(t)
	id, _, err := reg.RegisterSchema("j-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"object","properties":{"id":{"type":"string"}}}`})
	require.NoError(t, err)
	aid, _, err := reg.RegisterSchema("a-value", sr.Schema{Schema: `{"type":"string"}`})
	require.NoError(t, err)
	msg := frame(t, id, nil, nil, rawEnc([]byte(`{"id":"x"}`)))
	d := NewJSONSchemaRegistry(c)
	got, err := d.Unframe(msg)
	require.NoError(t, err)
	require.Equal(t, `{"id":"x"}`, string(got))
	_, err = d.Unframe([]byte(`{"id":"x"}`))
	require.ErrorContains(t, err, "wrong magic byte 0x7b")
	_, err = d.Unframe([]byte{0, 0, 0, 0x7f, 0x7f, '{', '}'})
	require.ErrorContains(t, err, "not in the schema registry (404)")
	_, err = d.Unframe(frame(t, aid, nil, nil, rawEnc([]byte(`{}`))))
	require.ErrorContains(t, err, "is an Avro schema, not JSON Schema")
}

// Compiled schemas are rebuilt as protobuf-go's own descriptors (the
// fast ones dynamicpb wants), imports of well-known types included.
func TestProtobufSchemasBecomeProtobufGoDescriptors(t *testing.T) {
	reg, c := newRegistry(t)
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: eventProto, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	rs, err := c.Schema(context.Background(), id)
	require.NoError(t, err)
	fd, err := compileProto(rs)
	require.NoError(t, err)
	_, fromProtocompile := fd.(linker.Result)
	require.False(t, fromProtocompile, "%T", fd)
	require.NotNil(t, findMessage(fd.Messages(), "t.Event"))

	// A schema with a reference: both files rebuilt.
	_, _, err = reg.RegisterSchema("user", sr.Schema{Type: sr.TypeProtobuf, Schema: `syntax = "proto3"; package u; message User { string name = 1; }`})
	require.NoError(t, err)
	vid, _, err := reg.RegisterSchema("visits-value", sr.Schema{Type: sr.TypeProtobuf,
		Schema:     `syntax = "proto3"; package o; import "user.proto"; message Visit { u.User who = 1; message In { int64 n = 1; } }`,
		References: []sr.SchemaReference{{Name: "user.proto", Subject: "user", Version: 1}}})
	require.NoError(t, err)
	rs, err = c.Schema(context.Background(), vid)
	require.NoError(t, err)
	fd, err = compileProto(rs)
	require.NoError(t, err)
	_, fromProtocompile = fd.(linker.Result)
	require.False(t, fromProtocompile, "%T", fd)
	require.NotNil(t, findMessage(fd.Messages(), "o.Visit.In"), "a nested message")
	require.Nil(t, findMessage(fd.Messages(), "o.In"))
}
