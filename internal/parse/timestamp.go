package parse

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxEpochMillis bounds epoch times (about the year 33658) so that
// nonsense such as 1e300 is refused rather than wrapped.
const maxEpochMillis = 1e15

// isoLayouts are tried in turn: RFC 3339 with or without a fraction, the
// same without a zone (UTC), and a date alone.
var isoLayouts = [...]string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"}

// validTimestampFormat mirrors domain's check: a named format or a Go
// layout naming the reference time's parts.
func validTimestampFormat(f string) bool {
	switch f {
	case "iso", "millis", "seconds", "auto":
		return true
	}
	return strings.Contains(f, "2006") || strings.Contains(f, "15:04") || strings.Contains(f, "Jan")
}

// timestamp reads the row's time, in Unix milliseconds, untruncated.
func (p *Parser) timestamp(f field) (int64, error) {
	col := p.tsColumn
	switch f.kind {
	case kindMissing:
		return 0, unparseable(col, "timestamp column %q is missing", col)
	case kindNull:
		return 0, unparseable(col, "timestamp column %q is null", col)
	case kindNumber:
		if p.tsFormat == "iso" {
			return 0, unparseable(col, "timestamp column %q: want an ISO-8601 string, got %s", col, describe(f))
		}
	case kindString:
	case kindTime:
		ms, err := p.decodedMillis(f.text)
		if err != nil {
			return 0, unparseable(col, "timestamp column %q: %v", col, err)
		}
		return ms, nil
	default:
		return 0, unparseable(col, "timestamp column %q: want a time, got %s", col, describe(f))
	}
	var ms int64
	var err error
	if s := f.content(); p.tsFormat == "iso" || p.tsFormat == "auto" && !isDecimal(s) {
		// RFC 3339 in UTC read digit by digit, the last second kept
		// (decoded_time.go), else parseISO: the same times and errors.
		ms, err = p.clock.millis(s)
	} else {
		ms, err = parseTime(p.tsFormat, s)
	}
	if err != nil {
		return 0, unparseable(col, "timestamp column %q: %v", col, err)
	}
	return ms, nil
}

func parseTime(format, s string) (int64, error) {
	switch format {
	case "millis":
		return epochMillis(s, 0)
	case "seconds":
		return epochMillis(s, 3)
	case "iso":
		return parseISO(s)
	case "auto":
		if isDecimal(s) {
			return epochMillis(s, 0)
		}
		return parseISO(s)
	}
	t, err := time.Parse(format, s)
	if err != nil {
		return 0, fmt.Errorf("%s does not match the layout %q", short(s), format)
	}
	return t.UnixMilli(), nil
}

func parseISO(s string) (int64, error) {
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("%s is not an ISO-8601 time", short(s))
}

var errOutOfRange = errors.New("out of range")

// epochMillis reads a decimal number of units, each 10^shift ms, rounding
// half away from zero to the millisecond. Plain decimals are converted
// exactly ("1.005" seconds is 1005 ms, which float arithmetic misses).
func epochMillis(s string, shift int) (int64, error) {
	if !isDecimal(s) {
		return 0, fmt.Errorf("%s is not a number", short(s))
	}
	if ms, ok := exactMillis(s, shift); ok {
		return ms, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	ms := math.Round(f * math.Pow10(shift))
	if err != nil || math.Abs(ms) > maxEpochMillis {
		return 0, fmt.Errorf("%s is %w", short(s), errOutOfRange)
	}
	return int64(ms), nil
}

// exactMillis converts a decimal without exponent whose result is in
// range; ok is false for anything else.
func exactMillis(s string, shift int) (int64, bool) {
	neg := s[0] == '-'
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if strings.ContainsAny(s, "eE") || len(whole) > 16 {
		return 0, false
	}
	var n int64
	for _, c := range whole {
		n = n*10 + int64(c-'0')
	}
	for i := range shift {
		n *= 10
		if i < len(frac) {
			n += int64(frac[i] - '0')
		}
	}
	if len(frac) > shift && frac[shift] >= '5' {
		n++
	}
	if n > maxEpochMillis {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
