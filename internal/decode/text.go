package decode

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"
)

// text is a decoder's buffer: the texts of one message's values are
// written here and handed over as views (decode.go). Appending may move
// the buffer, which leaves earlier views on the old one, still valid.
type text struct {
	b     []byte
	clock clock
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

// str is a string value, its invalid UTF-8 (if any) replaced by U+FFFD.
func (t *text) str(s string) Value {
	if utf8.ValidString(s) {
		return Value{Kind: String, Text: s}
	}
	start := len(t.b)
	t.b = append(t.b, strings.ToValidUTF8(s, "\uFFFD")...)
	return Value{Kind: String, Text: t.since(start)}
}

// bytes renders binary data: base64, or with asString the bytes as text
// (invalid UTF-8 replaced).
func (t *text) bytes(b []byte, asString bool) Value {
	start := len(t.b)
	if asString {
		if !utf8.Valid(b) {
			t.b = append(t.b, strings.ToValidUTF8(string(b), "\uFFFD")...)
			return Value{Kind: String, Text: t.since(start)}
		}
		t.b = append(t.b, b...)
	} else {
		t.b = base64.StdEncoding.AppendEncode(t.b, b)
	}
	return Value{Kind: String, Text: t.since(start)}
}

// time renders an instant in UTC, with as many fraction digits as it
// needs.
func (t *text) time(ts time.Time) Value {
	return t.instant(ts.Unix(), ts.Nanosecond())
}

// instant renders sec seconds and nsec nanoseconds (0 to 999,999,999)
// after the Unix epoch as time.RFC3339Nano in UTC.
func (t *text) instant(sec int64, nsec int) Value {
	start := len(t.b)
	t.b = t.clock.appendRFC3339(t.b, sec, nsec)
	return Value{Kind: Time, Text: t.since(start)}
}

// clock keeps the text of the last second it rendered: a partition's
// records come in time order, many to a second.
type clock struct {
	sec  int64
	text [len("2006-01-02T15:04:05")]byte
	set  bool
}

// appendRFC3339 appends an instant as AppendFormat(time.RFC3339Nano) of
// its UTC time would, several times faster (a record's time is rendered
// once per record): years 0 to 9999 digit by digit, others by
// AppendFormat.
func (c *clock) appendRFC3339(b []byte, sec int64, nsec int) []byte {
	const minSec, maxSec = -62167219200, 253402300799 // 0000-01-01T00:00:00Z, 9999-12-31T23:59:59Z
	if sec < minSec || sec > maxSec {
		return time.Unix(sec, int64(nsec)).UTC().AppendFormat(b, time.RFC3339Nano)
	}
	if !c.set || sec != c.sec {
		c.sec, c.set = sec, true
		days, secs := floorDiv(sec, 86400)
		y, mo, d := civil(days)
		put2 := func(at int, n int64) { c.text[at], c.text[at+1] = byte('0'+n/10), byte('0'+n%10) }
		put2(0, y/100)
		put2(2, y%100)
		c.text[4] = '-'
		put2(5, mo)
		c.text[7] = '-'
		put2(8, d)
		c.text[10] = 'T'
		put2(11, secs/3600)
		c.text[13] = ':'
		put2(14, secs/60%60)
		c.text[16] = ':'
		put2(17, secs%60)
	}
	b = append(b, c.text[:]...)
	if nsec != 0 {
		var frac [len(".999999999")]byte
		frac[0] = '.'
		digits, v := 9, nsec
		switch {
		case v%1_000_000 == 0:
			digits, v = 3, v/1_000_000
		case v%1_000 == 0:
			digits, v = 6, v/1_000
		}
		for i := digits; i >= 1; i-- {
			frac[i] = byte('0' + v%10)
			v /= 10
		}
		n := 1 + digits
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, 'Z')
}

// floorDiv is a / b and a mod b, rounded towards minus infinity.
func floorDiv(a, b int64) (int64, int64) {
	q, r := a/b, a%b
	if r < 0 {
		q, r = q-1, r+b
	}
	return q, r
}

// civil is the proleptic Gregorian date of days since 1970-01-01 (Howard
// Hinnant's days_from_civil, inverted).
func civil(days int64) (y, m, d int64) {
	era, doe := floorDiv(days+719468, 146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
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
