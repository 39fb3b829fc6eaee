// Package eventgen makes sample wiki-edit events and produces them to Kafka,
// so the dev stack and tests have a steady, realistic stream to ingest.
// Dimensions have mixed cardinality (a few actions, a few dozen countries,
// thousands of users, tens of thousands of pages) with skewed popularity, and
// every event id is unique.
package eventgen

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"
)

// Generator makes events. Event is deterministic given RunID, Seed and the
// index, except for the timestamp, which comes from Now.
type Generator struct {
	// RunID prefixes every event id, so runs with different ids never
	// collide. Required.
	RunID string
	// Seed chooses dimension values. Default 0.
	Seed uint64
	// Now stamps each event's ts. Default time.Now.
	Now func() time.Time

	next atomic.Int64 // index of the next event Produce sends
}

// New returns a generator for one run.
func New(runID string, seed uint64) *Generator {
	return &Generator{RunID: runID, Seed: seed}
}

// event is the JSON shape; field order is the output order.
type event struct {
	ID      string `json:"id"`
	TS      string `json:"ts"`
	Page    string `json:"page"`
	User    string `json:"user"`
	Country string `json:"country"`
	Action  string `json:"action"`
	Delta   int64  `json:"delta"`
}

// Event returns event i as a JSON object of about 140 bytes.
func (g *Generator) Event(i int64) []byte {
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	r := newRand(g.Seed, i)
	action := pickAction(r)
	e := event{
		ID:      g.ID(i),
		TS:      now().UTC().Format(time.RFC3339Nano),
		Page:    pickPage(r),
		User:    pickUser(r),
		Country: pickCountry(r),
		Action:  action,
		Delta:   pickDelta(r, action),
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic("eventgen: marshal event: " + err.Error()) // plain strings and an int cannot fail
	}
	return b
}

// id is event i's unique id.
// ID is the id of event i: "<run id>-<i>".
func (g *Generator) ID(i int64) string { return g.RunID + "-" + strconv.FormatInt(i, 10) }
