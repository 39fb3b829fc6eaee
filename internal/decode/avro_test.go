package decode

import (
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"handoff/internal/registry"
)

const allTypes = `{"type":"record","name":"Event","namespace":"t","fields":[
 {"name":"s","type":"string"},
 {"name":"i","type":"int"},
 {"name":"l","type":"long"},
 {"name":"f","type":"float"},
 {"name":"d","type":"double"},
 {"name":"b","type":"boolean"},
 {"name":"raw","type":"bytes"},
 {"name":"fx","type":{"type":"fixed","name":"F2","size":2}},
 {"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
 {"name":"maybe","type":["null","string"]},
 {"name":"absent","type":["null","long"],"default":null},
 {"name":"either","type":["null","long","string"]},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"long"}},
 {"name":"user","type":{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":["null","int"]}]}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"tsu","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"uid","type":{"type":"string","logicalType":"uuid"}},
 {"name":"at","type":["null",{"type":"long","logicalType":"timestamp-millis"}]}
]}`

func allTypesValue() map[string]any {
	ts := time.Date(2024, 5, 1, 12, 30, 45, 123_000_000, time.UTC)
	return map[string]any{
		"s": "héllo \"q\"", "i": 7, "l": int64(-9007199254740993), "f": float32(1.5), "d": 0.1, "b": true,
		"raw": []byte{0, 1, 0xff}, "fx": [2]byte{'h', 'i'}, "e": "GREEN",
		"maybe": "yes", "absent": nil, "either": map[string]any{"string": "two"},
		"tags": []any{"a", "b"}, "attrs": map[string]any{"z": int64(1), "a": int64(2)},
		"user": map[string]any{"name": "ann", "age": map[string]any{"int": 41}},
		"ts":   ts, "tsu": ts.Add(456 * time.Microsecond), "day": time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC),
		"price": big.NewRat(12345, 100), "uid": "8b1f4c3e-0000-4000-8000-000000000001",
		"at": map[string]any{"long.timestamp-millis": ts},
	}
}

var allTypesFields = []string{
	`s=string:héllo "q"`, "i=number:7", "l=number:-9007199254740993", "f=number:1.5", "d=number:0.1", "b=bool:true",
	"raw=string:AAH/", "fx=string:aGk=", "e=string:GREEN",
	"maybe=string:yes", "absent=null:", "either=string:two",
	`tags=array:["a","b"]`, `attrs=object:{"a":2,"z":1}`, `user=object:{"name":"ann","age":41}`,
	"ts=time:2024-05-01T12:30:45.123Z", "tsu=time:2024-05-01T12:30:45.123456Z", "day=time:2024-05-01",
	"price=number:123.45", "uid=string:8b1f4c3e-0000-4000-8000-000000000001", "at=time:2024-05-01T12:30:45.123Z",
}

func avroEnc(t *testing.T, schema string) func(any) ([]byte, error) {
	s := avro.MustParse(schema)
	return func(v any) ([]byte, error) { return avro.Marshal(s, v) }
}

func TestAvroEveryTypeFromTheRegistry(t *testing.T) {
	reg, c := newRegistry(t)
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: allTypes})
	require.NoError(t, err)
	d := NewAvroRegistry(c, Options{})
	msg := frame(t, id, nil, allTypesValue(), avroEnc(t, allTypes))
	var got collect
	require.NoError(t, d.Decode(msg, &got))
	require.Equal(t, allTypesFields, got.fields)

	// A second message reuses the buffer: its texts are its own.
	v := allTypesValue()
	v["s"], v["maybe"] = "second", nil
	got = collect{}
	require.NoError(t, d.Decode(frame(t, id, nil, v, avroEnc(t, allTypes)), &got))
	require.Equal(t, "s=string:second", got.fields[0])
	require.Equal(t, "maybe=null:", got.fields[9])
}

func TestAvroBinaryAsString(t *testing.T) {
	reg, c := newRegistry(t)
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: allTypes})
	require.NoError(t, err)
	var got collect
	require.NoError(t, NewAvroRegistry(c, Options{BinaryAsString: true}).Decode(frame(t, id, nil, allTypesValue(), avroEnc(t, allTypes)), &got))
	require.Equal(t, "fx=string:hi", got.fields[7])
}

func TestAvroSkipsFieldsNotWanted(t *testing.T) {
	reg, c := newRegistry(t)
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: allTypes})
	require.NoError(t, err)
	got := collect{want: func(n string) bool { return n == "l" || n == "user" }}
	require.NoError(t, NewAvroRegistry(c, Options{}).Decode(frame(t, id, nil, allTypesValue(), avroEnc(t, allTypes)), &got))
	require.Equal(t, []string{"l=number:-9007199254740993", `user=object:{"name":"ann","age":41}`}, got.fields)
}

func TestAvroInlineSchema(t *testing.T) {
	const schema = `{"type":"record","name":"U","fields":[{"name":"FullName","type":"string"},{"name":"Country","type":["null","string"]}]}`
	d, err := NewAvroInline(schema, Options{})
	require.NoError(t, err)
	b, err := avro.Marshal(avro.MustParse(schema), map[string]any{"FullName": "Ann", "Country": nil})
	require.NoError(t, err)
	var got collect
	require.NoError(t, d.Decode(b, &got))
	require.Equal(t, []string{"FullName=string:Ann", "Country=null:"}, got.fields)

	_, err = NewAvroInline(`{"type":"record"}`, Options{})
	require.ErrorContains(t, err, "not an Avro schema")
}

func TestAvroBadMessagesSayWhy(t *testing.T) {
	reg, c := newRegistry(t)
	const schema = `{"type":"record","name":"E","fields":[{"name":"id","type":"string"},{"name":"n","type":"long"}]}`
	id, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: schema})
	require.NoError(t, err)
	good := frame(t, id, nil, map[string]any{"id": "x", "n": int64(3)}, avroEnc(t, schema))
	pid, _, err := reg.RegisterSchema("p-value", sr.Schema{Schema: `syntax = "proto3"; message M { string s = 1; }`, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	const enumSchema = `{"type":"record","name":"C","fields":[{"name":"id","type":"string"},{"name":"c","type":{"type":"enum","name":"Color","symbols":["A"]}}]}`
	eid, _, err := reg.RegisterSchema("c-value", sr.Schema{Schema: enumSchema})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		msg  []byte
		want string
	}{
		{"empty", nil, "empty message: want the schema-registry wire format"},
		{"json", []byte(`{"id":"x"}`), "wrong magic byte 0x7b: want 0x00"},
		{"truncated frame", []byte{0, 0, 0}, "truncated frame: 3 bytes, want at least 5"},
		{"unknown id", append([]byte{0, 0, 0, 0x10, 0}, good[5:]...), "schema id 4096 is not in the schema registry (404)"},
		{"truncated payload", good[:len(good)-1], "not Avro of schema id " + itoa(id) + ": the value ends before the record does"},
		{"trailing bytes", append(append([]byte{}, good...), 1, 2), "bytes follow the end of the Avro record of schema id"},
		{"garbage", append(good[:5:5], 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "not Avro of schema id"},
		{"bad enum", append(frame(t, eid, nil, map[string]any{"id": "x", "c": "A"}, avroEnc(t, enumSchema))[:7:7], 8), `field "c": avro: decode enum symbol: unknown enum symbol`},
		{"a protobuf schema", append([]byte{0, 0, 0, 0, byte(pid)}, 2, 'h', 'i'), "is a Protobuf schema, not Avro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := NewAvroRegistry(c, Options{}).Decode(tc.msg, &collect{})
			var de *Error
			require.ErrorAs(t, err, &de)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestAvroRegistryOutageIsNotABadMessage(t *testing.T) {
	reg, c := newRegistry(t)
	const schema = `{"type":"record","name":"E","fields":[{"name":"id","type":"string"}]}`
	id, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: schema})
	require.NoError(t, err)
	reg.Intercept(func(w http.ResponseWriter, _ *http.Request) bool { w.WriteHeader(http.StatusBadGateway); return true })
	err = NewAvroRegistry(c, Options{}).Decode(frame(t, id, nil, map[string]any{"id": "x"}, avroEnc(t, schema)), &collect{})
	var un *registry.UnavailableError
	require.ErrorAs(t, err, &un)
	var de *Error
	require.False(t, errorsAs(err, &de), "an outage is not an *Error")
	reg.ClearInterceptors()
	require.NoError(t, NewAvroRegistry(c, Options{}).Decode(frame(t, id, nil, map[string]any{"id": "x"}, avroEnc(t, schema)), &collect{}))
}

func TestAvroEvolution(t *testing.T) {
	reg, c := newRegistry(t)
	const v1 = `{"type":"record","name":"E","fields":[{"name":"id","type":"string"},{"name":"delta","type":"long"}]}`
	const v2 = `{"type":"record","name":"E","fields":[{"name":"id","type":"string"},{"name":"delta","type":"long"},{"name":"lang","type":"string","default":"en"}]}`
	const v3 = `{"type":"record","name":"E","fields":[{"name":"id","type":"string"},{"name":"delta","type":"string"},{"name":"lang","type":"string","default":"en"}]}`
	require.NoError(t, reg.SetCompat("e-value", sr.CompatNone))
	id1, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: v1})
	require.NoError(t, err)
	id2, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: v2})
	require.NoError(t, err)
	id3, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: v3})
	require.NoError(t, err)
	d := NewAvroRegistry(c, Options{Numeric: []string{"delta"}})

	var got collect
	require.NoError(t, d.Decode(frame(t, id1, nil, map[string]any{"id": "a", "delta": int64(1)}, avroEnc(t, v1)), &got))
	require.NoError(t, d.Decode(frame(t, id2, nil, map[string]any{"id": "b", "delta": int64(2), "lang": "fr"}, avroEnc(t, v2)), &got))
	require.Equal(t, []string{"id=string:a", "delta=number:1", "id=string:b", "delta=number:2", "lang=string:fr"}, got.fields)

	err = d.Decode(frame(t, id3, nil, map[string]any{"id": "c", "delta": "3", "lang": "de"}, avroEnc(t, v3)), &got)
	var de *Error
	require.ErrorAs(t, err, &de)
	require.Equal(t, id3, de.SchemaID)
	require.Contains(t, err.Error(), `changes field "delta" of E from a number (schema id `+itoa(id2)+`) to string`)
	require.Contains(t, err.Error(), "Register a schema that keeps \"delta\" numeric")

	// A spec reading delta as a string takes all three.
	require.NoError(t, NewAvroRegistry(c, Options{}).Decode(frame(t, id3, nil, map[string]any{"id": "c", "delta": "3", "lang": "de"}, avroEnc(t, v3)), &collect{}))
}

// Texts are valid UTF-8 whatever the message holds: invalid sequences in
// strings, bytes read as text, map keys and nested strings become U+FFFD.
func TestAvroInvalidUTF8IsReplaced(t *testing.T) {
	const schema = `{"type":"record","name":"U","fields":[
 {"name":"s","type":"string"},{"name":"maybe","type":["null","string"]},{"name":"raw","type":"bytes"},
 {"name":"m","type":{"type":"map","values":"string"}},{"name":"either","type":["null","long","string"]}]}`
	d, err := NewAvroInline(schema, Options{BinaryAsString: true})
	require.NoError(t, err)
	b, err := avro.Marshal(avro.MustParse(schema), map[string]any{
		"s": "a\xffb", "maybe": "\xc3", "raw": []byte("x\xfe"), "m": map[string]any{"k\xff": "v\xff"}, "either": map[string]any{"string": "\xff"},
	})
	require.NoError(t, err)
	var got collect
	require.NoError(t, d.Decode(b, &got))
	require.Equal(t, []string{"s=string:a\uFFFDb", "maybe=string:\uFFFD", "raw=string:x\uFFFD", `m=object:{"k\ufffd":"v\ufffd"}`, "either=string:\uFFFD"}, got.fields)
}

// A schema that is not a record (a key's, often) is one value.
func TestAvroScalarSchemas(t *testing.T) {
	for _, tc := range []struct {
		schema string
		v      any
		want   string
	}{
		{`"string"`, "k-1", "=string:k-1"},
		{`"long"`, int64(-42), "=number:-42"},
		{`["null","long"]`, int64(7), "=number:7"},
		{`["null","long"]`, nil, "=null:"},
		{`{"type":"enum","name":"E","symbols":["A","B"]}`, "B", "=string:B"},
		{`{"type":"long","logicalType":"timestamp-micros"}`, time.UnixMicro(-1).UTC(), "=time:1969-12-31T23:59:59.999999Z"},
		{`{"type":"array","items":"int"}`, []int{1, 2}, "=array:[1,2]"},
	} {
		d, err := NewAvroInline(tc.schema, Options{})
		require.NoError(t, err)
		b, err := avro.Marshal(avro.MustParse(tc.schema), tc.v)
		require.NoError(t, err)
		for range 2 { // the plan is made once and reused
			var got collect
			require.NoError(t, d.Decode(b, &got), tc.schema)
			require.Equal(t, []string{tc.want}, got.fields, tc.schema)
		}
	}
}
