package eventgen

import (
	"encoding/json"
	"fmt"
	"strings"
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

// AvroSchemaV2 is AvroSchema with a field added with a default, as
// BACKWARD compatibility allows: lang, "en" unless written.
var AvroSchemaV2 = strings.Replace(AvroSchema, `{"name":"delta","type":"long"}`,
	`{"name":"delta","type":"long"},{"name":"lang","type":"string","default":"en"}`, 1)

var (
	avroSchema   = avro.MustParse(AvroSchema)
	avroSchemaV2 = avro.MustParse(AvroSchemaV2)
)

// AvroEvent returns event i (the same event as Event(i)) in the schema
// registry's wire format, written with schemaID (AvroSchema as the
// registry numbers it) by hamba/avro through franz-go's serde framing, as
// a Confluent producer would write it.
func (g *Generator) AvroEvent(i int64, schemaID int) ([]byte, error) {
	v, err := g.avroRecord(i)
	if err != nil {
		return nil, err
	}
	return sr.Encode(v, &sr.ConfluentHeader{}, schemaID, nil, func(v any) ([]byte, error) { return avro.Marshal(avroSchema, v) })
}

// AvroEventV2 is AvroEvent written with AvroSchemaV2 (schemaID), its
// lang "fr".
func (g *Generator) AvroEventV2(i int64, schemaID int) ([]byte, error) {
	v, err := g.avroRecord(i)
	if err != nil {
		return nil, err
	}
	v["lang"] = "fr"
	return sr.Encode(v, &sr.ConfluentHeader{}, schemaID, nil, func(v any) ([]byte, error) { return avro.Marshal(avroSchemaV2, v) })
}

// avroRecord is event i's fields as hamba/avro writes them.
func (g *Generator) avroRecord(i int64) (map[string]any, error) {
	var e event
	if err := json.Unmarshal(g.Event(i), &e); err != nil {
		return nil, err
	}
	ts, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		return nil, fmt.Errorf("event %d: %w", i, err)
	}
	return map[string]any{"id": e.ID, "ts": ts, "page": e.Page, "user": e.User, "country": e.Country, "action": e.Action, "delta": e.Delta}, nil
}
