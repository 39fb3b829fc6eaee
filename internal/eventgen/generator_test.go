package eventgen_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"handoff/internal/eventgen"
)

var fixed = time.Date(2026, 9, 18, 12, 30, 0, 123456789, time.UTC)

type event struct {
	ID      string `json:"id"`
	TS      string `json:"ts"`
	Page    string `json:"page"`
	User    string `json:"user"`
	Country string `json:"country"`
	Action  string `json:"action"`
	Delta   *int64 `json:"delta"`
}

func decode(t *testing.T, b []byte) event {
	t.Helper()
	var e event
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("event %s: %v", b, err)
	}
	if e.ID == "" || e.Page == "" || e.User == "" || e.Country == "" || e.Action == "" || e.Delta == nil {
		t.Fatalf("event %s lacks a field", b)
	}
	return e
}

func TestEventIsDeterministicButForTime(t *testing.T) {
	t.Parallel()
	a := &eventgen.Generator{RunID: "r1", Seed: 7, Now: func() time.Time { return fixed }}
	b := &eventgen.Generator{RunID: "r1", Seed: 7, Now: func() time.Time { return fixed }}
	for i := range int64(100) {
		if x, y := a.Event(i), b.Event(i); !bytes.Equal(x, y) {
			t.Fatalf("event %d differs:\n%s\n%s", i, x, y)
		}
	}
	other := &eventgen.Generator{RunID: "r1", Seed: 8, Now: func() time.Time { return fixed }}
	same := 0
	for i := range int64(100) {
		if bytes.Equal(a.Event(i), other.Event(i)) {
			same++
		}
	}
	if same > 10 {
		t.Fatalf("%d of 100 events equal under another seed", same)
	}
}

func TestEventShape(t *testing.T) {
	t.Parallel()
	g := &eventgen.Generator{RunID: "run", Seed: 1, Now: func() time.Time { return fixed.In(time.FixedZone("X", 3600)) }}
	e := decode(t, g.Event(42))
	if e.ID != "run-42" {
		t.Errorf("id = %q, want run-42", e.ID)
	}
	if e.TS != "2026-09-18T12:30:00.123456789Z" {
		t.Errorf("ts = %q, want RFC 3339 in UTC", e.TS)
	}
	if _, err := time.Parse(time.RFC3339Nano, e.TS); err != nil {
		t.Error(err)
	}
}

func TestEventsHaveMixedCardinality(t *testing.T) {
	t.Parallel()
	g := eventgen.New("card", 99)
	const n = 20_000
	seen := map[string]map[string]bool{"id": {}, "page": {}, "user": {}, "country": {}, "action": {}}
	size := 0
	for i := range int64(n) {
		b := g.Event(i)
		size += len(b)
		e := decode(t, b)
		for k, v := range map[string]string{"id": e.ID, "page": e.Page, "user": e.User, "country": e.Country, "action": e.Action} {
			seen[k][v] = true
		}
		switch {
		case e.Action == "create" && *e.Delta <= 0, e.Action == "delete" && *e.Delta >= 0:
			t.Fatalf("event %s: delta has the wrong sign", b)
		}
	}
	if avg := size / n; avg < 100 || avg > 170 {
		t.Errorf("average event is %d bytes, want about 120-150", avg)
	}
	want := map[string][2]int{ // [min, max] distinct values
		"id": {n, n}, "action": {3, 3}, "country": {15, 30}, "user": {1000, 12_010}, "page": {3000, 60_000},
	}
	for k, r := range want {
		if c := len(seen[k]); c < r[0] || c > r[1] {
			t.Errorf("%s has %d distinct values, want %d-%d", k, c, r[0], r[1])
		}
	}
}
