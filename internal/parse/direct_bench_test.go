package parse_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

// BenchmarkParseDirect compares the direct path with the general one on
// the JSON backlog's events through ParseRecordView: as produced (one key
// order), and with each event's keys in an order of its own, where the
// key cache's guesses miss.
func BenchmarkParseDirect(b *testing.B) {
	events := backlogEvents(4096)
	r := rand.New(rand.NewPCG(1, 2))
	var inOrder, shuffled [][]byte
	for _, e := range events {
		inOrder = append(inOrder, e.json)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e.json, &m); err != nil {
			b.Fatal(err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		msg := []byte{'{'}
		for i, k := range keys {
			if i > 0 {
				msg = append(msg, ',')
			}
			msg = append(append(append(msg, '"'), k...), `":`...)
			msg = append(msg, m[k]...)
		}
		shuffled = append(shuffled, append(msg, '}'))
	}
	for _, c := range []struct {
		name string
		msgs [][]byte
	}{{"in-order", inOrder}, {"shuffled", shuffled}} {
		for _, direct := range []bool{true, false} {
			name := c.name + map[bool]string{true: "/direct", false: "/general"}[direct]
			b.Run(name, func(b *testing.B) {
				p := mustNew(b, backlogSchema(false), jsonIO())
				if !direct {
					parse.WithoutDirect(p)
				}
				var rec parse.Record
				emit := func(*domain.Row) {}
				i := 0
				for b.Loop() {
					rec.Value = c.msgs[i%len(c.msgs)]
					if err := p.ParseRecordView(&rec, now, emit); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
