package workload

import (
	"encoding/json"
	"fmt"
	"time"
)

// The status page's JSON writes durations as time.Duration.String ("250ms"),
// which time.ParseDuration reads back, not as nanosecond integers: each
// type with a duration shadows that field with a string.

// MarshalJSON writes CheckEvery as a duration string.
func (l Limits) MarshalJSON() ([]byte, error) {
	type plain Limits
	return json.Marshal(struct {
		plain
		CheckEvery string `json:"checkEvery"`
	}{plain(l), l.CheckEvery.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *Limits) UnmarshalJSON(b []byte) error {
	type plain Limits
	var v struct {
		plain
		CheckEvery string `json:"checkEvery"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d, err := parseDuration("checkEvery", v.CheckEvery)
	*l = Limits(v.plain)
	l.CheckEvery = d
	return err
}

// MarshalJSON writes PushBackTotal as a duration string.
func (m Memory) MarshalJSON() ([]byte, error) {
	type plain Memory
	return json.Marshal(struct {
		plain
		PushBackTotal string `json:"pushBackTotal"`
	}{plain(m), m.PushBackTotal.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Memory) UnmarshalJSON(b []byte) error {
	type plain Memory
	var v struct {
		plain
		PushBackTotal string `json:"pushBackTotal"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d, err := parseDuration("pushBackTotal", v.PushBackTotal)
	*m = Memory(v.plain)
	m.PushBackTotal = d
	return err
}

// parseDuration reads a duration string; absent ("") is zero.
func parseDuration(key, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return d, nil
}
