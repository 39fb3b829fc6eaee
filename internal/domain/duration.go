package domain

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"time"
)

// Duration is a time.Duration that reads both Go syntax ("1h30m") and
// ISO-8601 ("PT1H30M", "P1D"), as Druid specs use, and writes Go syntax.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes Go syntax, or "" for zero.
func (d Duration) MarshalJSON() ([]byte, error) {
	if d == 0 {
		return json.Marshal("")
	}
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a string in Go or ISO-8601 syntax; "" is zero.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: fmt.Sprintf("want a duration string such as \"10m\" or \"PT10M\", got %s", b), Type: durationType}
	}
	v, err := ParseDuration(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: err.Error(), Type: durationType}
	}
	*d = Duration(v)
	return nil
}

var durationType = reflect.TypeFor[Duration]()

var isoDuration = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration parses "" (zero), Go syntax, or ISO-8601 days/hours/minutes/
// seconds. Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if m := isoDuration.FindStringSubmatch(s); m != nil && s != "P" && s != "PT" {
		return isoToDuration(s, m)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: want Go syntax such as \"10m\" or ISO-8601 such as \"PT10M\"", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return v, nil
}

// isoToDuration adds up the matched ISO-8601 parts, refusing totals that do
// not fit a time.Duration (about 292 years).
func isoToDuration(s string, m []string) (time.Duration, error) {
	tooLong := fmt.Errorf("%q is too long: at most about 292 years", s)
	var total float64
	units := []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, tooLong
		}
		total += n * float64(u)
	}
	if total >= math.MaxInt64 {
		return 0, tooLong
	}
	return time.Duration(math.Round(total)), nil
}
