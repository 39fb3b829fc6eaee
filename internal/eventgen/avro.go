package eventgen

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// AvroSchema is the sample event as an Avro record: the same fields as
// Event's JSON, its time a timestamp-millis.
const AvroSchema = `{"type":"record","name":"Edit","namespace":"handoff.sample","fields":[
 {"name":"id","type":"string"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"page","type":"string"},
 {"name":"user","type":"string"},
 {"name":"country","type":"string"},
 {"name":"action","type":"string"},
 {"name":"delta","type":"long"}
]}`

var avroSchema = avro.MustParse(AvroSchema)

// AvroEvent returns event i (the same event as Event(i)) in the schema
// registry's wire format, written with schemaID (AvroSchema as the
// registry numbers it) by hamba/avro through franz-go's serde framing, as
// a Confluent producer would write it.
func (g *Generator) AvroEvent(i int64, schemaID int) ([]byte, error) {
	var e event
	if err := json.Unmarshal(g.Event(i), &e); err != nil {
		return nil, err
	}
	ts, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		return nil, fmt.Errorf("event %d: %w", i, err)
	}
	v := map[string]any{"id": e.ID, "ts": ts, "page": e.Page, "user": e.User, "country": e.Country, "action": e.Action, "delta": e.Delta}
	return sr.Encode(v, &sr.ConfluentHeader{}, schemaID, nil, func(v any) ([]byte, error) { return avro.Marshal(avroSchema, v) })
}
