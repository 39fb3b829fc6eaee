package decode

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
)

// checkFuzzError fails on what a message must never cause: a panic (which
// Decode turns into an error naming it), an outage (the registry is up),
// or an error without a reason.
func checkFuzzError(t *testing.T, err error) {
	if err == nil {
		return
	}
	var de *Error
	if !errorsAs(err, &de) {
		t.Fatalf("a message caused %T, not a decode error: %v", err, err)
	}
	if strings.Contains(de.Msg, "failed on this message") || de.Msg == "" {
		t.Fatalf("decoder panicked or gave no reason: %q", de.Msg)
	}
}

func FuzzAvro(f *testing.F) {
	reg, c := newRegistry(&testing.T{})
	defer reg.Close()
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: allTypes})
	if err != nil {
		f.Fatal(err)
	}
	good, err := sr.Encode(allTypesValue(), &sr.ConfluentHeader{}, id, nil, avroEnc(&testing.T{}, allTypes))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:20])
	f.Add([]byte{0, 0, 0, 0, 9})
	f.Add([]byte(`{"a":1}`))
	d := NewAvroRegistry(c, Options{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) >= 5 && msg[0] == 0 {
			msg[1], msg[2], msg[3], msg[4] = 0, 0, 0, byte(id) // keep to the known schema mostly
		}
		checkFuzzError(t, d.Decode(msg, &collect{}))
	})
}

func FuzzProtobuf(f *testing.F) {
	reg, c := newRegistry(&testing.T{})
	defer reg.Close()
	id, _, err := reg.RegisterSchema("events-value", sr.Schema{Schema: eventProto, Type: sr.TypeProtobuf})
	if err != nil {
		f.Fatal(err)
	}
	body := protoMessage(&testing.T{}, eventProto, "t.Event", `{"id":"e","n":"5","tags":["a"],"user":{"name":"x"},"ts":"2024-01-01T00:00:00Z","meta":{"a":1}}`)
	good, err := sr.Encode(nil, &sr.ConfluentHeader{}, id, []int{1}, rawEnc(body))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:9])
	f.Add([]byte{0, 0, 0, 0, 1, 0x7f})
	d := NewProtobufRegistry(c, Options{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) >= 5 && msg[0] == 0 {
			msg[1], msg[2], msg[3], msg[4] = 0, 0, 0, byte(id)
		}
		checkFuzzError(t, d.Decode(msg, &collect{}))
	})
}

func FuzzJSONSchemaUnframe(f *testing.F) {
	reg, c := newRegistry(&testing.T{})
	defer reg.Close()
	id, _, err := reg.RegisterSchema("j-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"object"}`})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0, 0, 0, 0, byte(id), '{', '}'})
	f.Add([]byte{0, 0})
	d := NewJSONSchemaRegistry(c)
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) >= 5 && msg[0] == 0 {
			msg[1], msg[2], msg[3], msg[4] = 0, 0, 0, byte(id)
		}
		_, err := d.Unframe(msg)
		checkFuzzError(t, err)
	})
}
