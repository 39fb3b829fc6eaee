package domain

import (
	"encoding/json"
	"fmt"
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
		return fmt.Errorf("want a duration string such as \"10m\" or \"PT10M\"")
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration parses "" (zero), Go syntax, or ISO-8601 days/hours/minutes/
// seconds. Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if m := isoDuration.FindStringSubmatch(s); m != nil && s != "P" && s != "PT" {
		var total time.Duration
		units := []time.Duration{24 * time.Hour, time.Hour, time.Minute}
		for i, u := range units {
			if m[i+1] != "" {
				n, _ := strconv.Atoi(m[i+1])
				total += time.Duration(n) * u
			}
		}
		if m[4] != "" {
			f, _ := strconv.ParseFloat(m[4], 64)
			total += time.Duration(f * float64(time.Second))
		}
		return total, nil
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
