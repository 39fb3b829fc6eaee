package parse

import (
	"encoding/json"
	"fmt"
	"strings"
)

// kind is the JSON kind of an input field (CSV cells are strings or null).
type kind uint8

const (
	kindMissing kind = iota
	kindNull
	kindString
	kindNumber
	kindBool
	kindObject
	kindArray
	// kindTime is an instant a binary format typed as one (decode.Time):
	// RFC 3339 text that timestampSpec reads whatever its format says,
	// and a string everywhere else.
	kindTime
)

// field is one input value, a view into the message. For strings, text is
// the content between the quotes, or with esc the quoted JSON, which still
// needs unescaping; for the other kinds it is the JSON text.
type field struct {
	text string
	kind kind
	esc  bool
}

// content is a string's content, or the JSON text of any other value.
func (f field) content() string {
	if f.esc {
		return unescape(f.text)
	}
	return f.text
}

// maxDepth bounds nesting as encoding/json does, so that a message of
// brackets cannot exhaust the stack.
const maxDepth = 10000

// scanner validates JSON while it reads it; it never allocates on the
// way, only to report an error.
type scanner struct {
	s string
	i int
}

func (sc *scanner) fail(format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if sc.i >= len(sc.s) {
		return unparseable("", "not valid JSON: it ends early, %s", what)
	}
	return unparseable("", "not valid JSON at byte %d: %s, got %q", sc.i, what, sc.s[sc.i])
}

func (sc *scanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// expect consumes c or fails.
func (sc *scanner) expect(c byte, what string) error {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return nil
	}
	return sc.fail("want %s", what)
}

// value reads the value at sc.i.
func (sc *scanner) value(depth int) (field, error) {
	if sc.i >= len(sc.s) {
		return field{}, sc.fail("want a value")
	}
	start := sc.i
	switch c := sc.s[sc.i]; {
	case c == '"':
		text, esc, err := sc.str()
		if esc {
			text = sc.s[start:sc.i]
		}
		return field{text: text, kind: kindString, esc: esc}, err
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return field{}, unparseable("", "not valid JSON: nested more than %d deep", maxDepth)
		}
		k, err := sc.composite(depth + 1)
		return field{text: sc.s[start:sc.i], kind: k}, err
	case c == '-' || (c >= '0' && c <= '9'):
		err := sc.number()
		return field{text: sc.s[start:sc.i], kind: kindNumber}, err
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(sc.s[sc.i:], lit) {
			sc.i += len(lit)
			if lit == "null" {
				return field{kind: kindNull}, nil
			}
			return field{text: lit, kind: kindBool}, nil
		}
	}
	return field{}, sc.fail("want a value")
}

// composite reads an object or array, validating its members.
func (sc *scanner) composite(depth int) (kind, error) {
	obj := sc.s[sc.i] == '{'
	k, end := kindArray, byte(']')
	if obj {
		k, end = kindObject, '}'
	}
	sc.i++
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == end {
		sc.i++
		return k, nil
	}
	for {
		if obj {
			if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
				return k, sc.fail("want a key string")
			}
			if _, _, err := sc.str(); err != nil {
				return k, err
			}
			sc.ws()
			if err := sc.expect(':', "':' after a key"); err != nil {
				return k, err
			}
			sc.ws()
		}
		if _, err := sc.value(depth); err != nil {
			return k, err
		}
		sc.ws()
		if sc.i < len(sc.s) && sc.s[sc.i] == ',' {
			sc.i++
			sc.ws()
			continue
		}
		return k, sc.expect(end, fmt.Sprintf("',' or '%c'", end))
	}
}

// str reads a string at sc.i; content is what lies between the quotes,
// escapes says whether it needs unescaping.
func (sc *scanner) str() (content string, escapes bool, err error) {
	sc.i++
	start := sc.i
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		if c >= 0x20 && c != '"' && c != '\\' {
			sc.i++
			continue
		}
		switch {
		case c == '"':
			sc.i++
			return sc.s[start : sc.i-1], escapes, nil
		case c == '\\':
			escapes = true
			if err := sc.escape(); err != nil {
				return "", escapes, err
			}
		case c < 0x20:
			return "", escapes, sc.fail("want no control characters in a string")
		default:
			sc.i++
		}
	}
	return "", escapes, sc.fail("want a closing quote")
}

func (sc *scanner) escape() error {
	sc.i++
	if sc.i >= len(sc.s) {
		return sc.fail("want an escape")
	}
	switch sc.s[sc.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		sc.i++
		return nil
	case 'u':
		sc.i++
		for range 4 {
			if sc.i >= len(sc.s) || !isHex(sc.s[sc.i]) {
				return sc.fail("want 4 hex digits after \\u")
			}
			sc.i++
		}
		return nil
	}
	return sc.fail("want a valid escape")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (sc *scanner) number() error {
	if sc.s[sc.i] == '-' {
		sc.i++
	}
	switch {
	case sc.i < len(sc.s) && sc.s[sc.i] == '0':
		sc.i++
	case !sc.digits():
		return sc.fail("want a digit")
	}
	if sc.i < len(sc.s) && sc.s[sc.i] == '.' {
		sc.i++
		if !sc.digits() {
			return sc.fail("want a digit after '.'")
		}
	}
	if sc.i < len(sc.s) && (sc.s[sc.i] == 'e' || sc.s[sc.i] == 'E') {
		sc.i++
		if sc.i < len(sc.s) && (sc.s[sc.i] == '+' || sc.s[sc.i] == '-') {
			sc.i++
		}
		if !sc.digits() {
			return sc.fail("want a digit in the exponent")
		}
	}
	return nil
}

func (sc *scanner) digits() bool {
	start := sc.i
	for sc.i < len(sc.s) && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		sc.i++
	}
	return sc.i > start
}

// unescape decodes a quoted JSON string already validated; invalid UTF-8
// becomes U+FFFD, as encoding/json does.
func unescape(quoted string) string {
	var s string
	if err := json.Unmarshal([]byte(quoted), &s); err != nil {
		return quoted // cannot happen: the scanner validated it
	}
	return s
}

// compact drops the whitespace between the tokens of validated JSON,
// returning text itself when there is none.
func compact(text string) string {
	var b strings.Builder
	inString, copied := false, 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			b.WriteString(text[copied:i])
			copied = i + 1
		}
	}
	if copied == 0 {
		return text
	}
	b.WriteString(text[copied:])
	return b.String()
}
