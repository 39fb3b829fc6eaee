package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"handoff/internal/domain"
)

// The Avro backlog (variant off-avro) holds the backlog's events as an
// Avro producer writes them: each event's fields in a record of
// avroBacklogSchema (the time as timestamp-millis, the metrics as longs),
// encoded by hamba/avro and framed in the schema registry's wire format
// by franz-go's serde, the schema registered in a registry (srfake) that
// this process serves and the worker reaches by its URL, as it would a
// Confluent Schema Registry.
const (
	avroBacklogTopic  = "bench-avro"
	avroBacklogSchema = `{"type":"record","name":"Edit","namespace":"bench","fields":[
 {"name":"id","type":"string"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"page","type":"string"},
 {"name":"browser","type":"string"},
 {"name":"country","type":"string"},
 {"name":"device","type":"string"},
 {"name":"action","type":"string"},
 {"name":"delta","type":"long"},
 {"name":"bytes","type":"long"}]}`
)

// avroEdit is one backlog event, read from its JSON and written as Avro.
type avroEdit struct {
	ID      string    `json:"id" avro:"id"`
	TS      time.Time `json:"ts" avro:"ts"`
	Page    string    `json:"page" avro:"page"`
	Browser string    `json:"browser" avro:"browser"`
	Country string    `json:"country" avro:"country"`
	Device  string    `json:"device" avro:"device"`
	Action  string    `json:"action" avro:"action"`
	Delta   int64     `json:"delta" avro:"delta"`
	Bytes   int64     `json:"bytes" avro:"bytes"`
}

// ensureAvroBacklog starts the registry, registers the schema, produces
// the Avro backlog and returns each partition's end and the input format
// that reads it.
func ensureAvroBacklog(ctx context.Context, s *stack, o options, res *result) (domain.Offsets, *domain.InputFormat, error) {
	reg := srfake.New()
	s.closers = append(s.closers, reg.Close)
	rc, err := sr.NewClient(sr.URLs(reg.URL()))
	if err != nil {
		return nil, nil, fmt.Errorf("registry client: %w", err)
	}
	ss, err := rc.CreateSchema(ctx, avroBacklogTopic+"-value", sr.Schema{Schema: avroBacklogSchema})
	if err != nil {
		return nil, nil, fmt.Errorf("register the backlog's Avro schema: %w", err)
	}
	schema, err := avro.Parse(avroBacklogSchema)
	if err != nil {
		return nil, nil, err
	}
	var serde sr.Serde
	serde.Register(ss.ID, avroEdit{}, sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(schema, v) }))

	if err := s.createTopic(ctx, avroBacklogTopic, o.partitions); err != nil {
		return nil, nil, err
	}
	logf("producing %d events to %s as Avro (schema id %d)", o.events, avroBacklogTopic, ss.ID)
	b := newBacklog(o.events, o.partitions, res.backlogEnd) // the JSON backlog's events, in its order
	bytes, err := produceValues(ctx, s.brokers, avroBacklogTopic, b, func(i int64) ([]byte, error) {
		var e avroEdit
		if err := json.Unmarshal(b.event(i), &e); err != nil {
			return nil, err
		}
		return serde.Encode(e)
	})
	if err != nil {
		return nil, nil, err
	}
	res.AvroMeanEventBytes = float64(bytes) / float64(o.events)
	ends, err := topicEnds(ctx, s.brokers, avroBacklogTopic, o.partitions)
	if err != nil {
		return nil, nil, err
	}
	in := &domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{
		AvroBytesDecoder: &domain.BytesDecoder{Type: domain.DecoderSchemaRegistry, URL: reg.URL()},
	}}
	return ends, in, nil
}

// avroBacklogIfAsked produces the Avro backlog when a variant reads it.
func avroBacklogIfAsked(ctx context.Context, s *stack, o options, res *result) (domain.Offsets, *domain.InputFormat, error) {
	if !slices.ContainsFunc(o.variants, func(k string) bool { return variants[k].avro }) {
		return nil, nil, nil
	}
	return ensureAvroBacklog(ctx, s, o, res)
}
