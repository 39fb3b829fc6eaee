package parse

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"handoff/internal/domain"
)

// isDecimal reports whether s is a plain decimal number: an optional sign,
// digits, an optional fraction and an optional exponent. It refuses what
// strconv would also take: NaN, Inf, hex and underscores.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	n := digitsAt(s, i)
	if n == 0 {
		return false
	}
	i += n
	if i < len(s) && s[i] == '.' {
		n = digitsAt(s, i+1)
		if n == 0 {
			return false
		}
		i += 1 + n
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		n = digitsAt(s, i)
		if n == 0 {
			return false
		}
		i += n
	}
	return i == len(s)
}

func digitsAt(s string, i int) int {
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i - start
}

// parseLong reads a whole number: integer text, or a decimal whose value
// is whole ("3.0", "1e3") and fits in an int64.
func parseLong(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	if !isDecimal(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// parseDouble reads a finite decimal number.
func parseDouble(s string) (float64, bool) {
	if !isDecimal(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil || !math.IsInf(f, 0)
}

// text renders a field as a string dimension would hold it: a string's
// content, a number's or a bool's JSON text, an object's or an array's
// compact JSON; ok is false for null and missing. It is a view into the
// message: keep it with p.keep.
func (p *Parser) text(f field) (s string, ok bool) {
	switch f.kind {
	case kindMissing, kindNull:
		return "", false
	case kindString:
		s = f.content()
	case kindObject, kindArray:
		s = compact(f.text)
	default:
		return f.text, true
	}
	if p.badUTF8 && !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, true
}

// Interning bounds: values this short repeat (pages, countries, ids of a
// few services), and sharing them saves an allocation and memory per row.
const (
	maxInternLen = 64
	maxInterned  = 4096
)

// keep returns s in memory of its own, so that rows do not hold on to the
// message they came from.
func (p *Parser) keep(s string) string {
	if len(s) > maxInternLen {
		return strings.Clone(s)
	}
	if v, ok := p.interned[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if len(p.interned) < maxInterned {
		p.interned[v] = v
	}
	return v
}

// dimension converts a field to a dimension of type t.
func (p *Parser) dimension(name string, t domain.ColumnType, f field) (domain.Value, error) {
	s, ok := p.text(f)
	switch {
	case !ok:
		return domain.NullValue(), nil
	case t == domain.TypeLong || t == domain.TypeDouble:
		return p.number(name, t, f, s)
	}
	if p.views {
		return domain.StringValue(s), nil // the caller copies what it keeps
	}
	return domain.StringValue(p.keep(s)), nil
}

// number converts a JSON number or numeric string; "" is null.
func (p *Parser) number(name string, t domain.ColumnType, f field, s string) (domain.Value, error) {
	if f.kind == kindString && s == "" {
		return domain.NullValue(), nil
	}
	numeric := f.kind == kindNumber || f.kind == kindString
	if t == domain.TypeLong {
		if n, ok := parseLong(s); ok && numeric {
			return domain.LongValue(n), nil
		}
		return domain.Value{}, unparseable(name, "dimension %q: want a whole number, got %s", name, describe(f))
	}
	if x, ok := parseDouble(s); ok && numeric {
		return domain.DoubleValue(x), nil
	}
	return domain.Value{}, unparseable(name, "dimension %q: want a number, got %s", name, describe(f))
}

// valueText renders a dimension value of type t as the filter compares it.
func valueText(v domain.Value, t domain.ColumnType) string {
	switch t {
	case domain.TypeLong:
		return strconv.FormatInt(v.Long(), 10)
	case domain.TypeDouble:
		return strconv.FormatFloat(v.Double(), 'f', -1, 64)
	}
	return v.S
}
