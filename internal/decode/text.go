package decode

import (
	"encoding/base64"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
)

// text is a decoder's buffer: the texts of one message's values are
// written here and handed over as views (decode.go). Appending may move
// the buffer, which leaves earlier views on the old one, still valid.
type text struct {
	b []byte
}

func (t *text) reset() { t.b = t.b[:0] }

// since returns what was written from start on, as a view.
func (t *text) since(start int) string {
	if start == len(t.b) {
		return ""
	}
	return unsafe.String(&t.b[start], len(t.b)-start)
}

// number renders a float as encoding/json does; NaN and infinities, which
// JSON has no number for, are strings ("NaN", "+Inf", "-Inf").
func (t *text) float(f float64, bits int) Value {
	start := len(t.b)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		t.b = strconv.AppendFloat(t.b, f, 'g', -1, bits)
		return Value{Kind: String, Text: t.since(start)}
	}
	t.b = appendFloat(t.b, f, bits)
	return Value{Kind: Number, Text: t.since(start)}
}

func appendFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, bits)
}

func (t *text) int(n int64) Value {
	start := len(t.b)
	t.b = strconv.AppendInt(t.b, n, 10)
	return Value{Kind: Number, Text: t.since(start)}
}

func (t *text) uint(n uint64) Value {
	start := len(t.b)
	t.b = strconv.AppendUint(t.b, n, 10)
	return Value{Kind: Number, Text: t.since(start)}
}

func boolValue(b bool) Value {
	if b {
		return Value{Kind: Bool, Text: "true"}
	}
	return Value{Kind: Bool, Text: "false"}
}

// bytes renders binary data: base64, or with asString the bytes as text.
func (t *text) bytes(b []byte, asString bool) Value {
	start := len(t.b)
	if asString {
		t.b = append(t.b, b...)
	} else {
		t.b = base64.StdEncoding.AppendEncode(t.b, b)
	}
	return Value{Kind: String, Text: t.since(start)}
}

// timeValue renders an instant in UTC, with as many fraction digits as it
// needs.
func (t *text) time(ts time.Time) Value {
	start := len(t.b)
	t.b = ts.UTC().AppendFormat(t.b, time.RFC3339Nano)
	return Value{Kind: Time, Text: t.since(start)}
}

// date renders a calendar date (Avro's date).
func (t *text) date(ts time.Time) Value {
	start := len(t.b)
	t.b = ts.UTC().AppendFormat(t.b, time.DateOnly)
	return Value{Kind: Time, Text: t.since(start)}
}

// jsonString appends s as a JSON string; invalid UTF-8 becomes U+FFFD, as
// encoding/json has it.
func (t *text) jsonString(s string) {
	const hex = "0123456789abcdef"
	t.b = append(t.b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				t.b = append(t.b, '\\', c)
			case c >= 0x20:
				t.b = append(t.b, c)
			case c == '\n':
				t.b = append(t.b, '\\', 'n')
			case c == '\r':
				t.b = append(t.b, '\\', 'r')
			case c == '\t':
				t.b = append(t.b, '\\', 't')
			default:
				t.b = append(t.b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			t.b = append(t.b, `\ufffd`...)
		} else {
			t.b = append(t.b, s[i:i+size]...)
		}
		i += size
	}
	t.b = append(t.b, '"')
}

// jsonValue appends a value rendered already as a JSON member or element.
func (t *text) jsonValue(v Value) {
	switch v.Kind {
	case Null:
		t.b = append(t.b, "null"...)
	case String, Time:
		t.jsonString(v.Text)
	default:
		t.b = append(t.b, v.Text...)
	}
}
