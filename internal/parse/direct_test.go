package parse_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

// directSpecs are specs the direct path (direct.go) takes: string, long
// and double dimensions, a field read by a dimension, a metric and the
// timestamp at once, every aggregator, the topic dimension, a filter on a
// dimension, late and early rejection, rollup on and off, and every kind
// of timestamp format.
func directSpecs() []fuzzSpec {
	ds := schema("auto", domain.GranularityHour, "page", "user", "p\u00e9", `q"\`)
	ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions,
		domain.DimensionSpec{Name: "n", Type: domain.TypeLong}, domain.DimensionSpec{Name: "x", Type: domain.TypeDouble})
	ds.MetricsSpec = []domain.MetricSpec{
		{Type: domain.MetricCount, Name: "rows"},
		{Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"},
		{Type: domain.MetricLongMin, Name: "min_n", FieldName: "n"},
		{Type: domain.MetricLongMax, Name: "max_ts", FieldName: "ts"},
		{Type: domain.MetricDoubleSum, Name: "sum_x", FieldName: "x"},
		{Type: domain.MetricDoubleMax, Name: "max_bytes", FieldName: "bytes"},
		{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"},
	}
	off := false
	plain := ds
	plain.GranularitySpec.Rollup = &off
	plain.GranularitySpec.QueryGranularity = ""
	filtered := ds
	filtered.Filter = &domain.Filter{Type: "selector", Dimension: "page", Value: "Main"}
	late := jsonIO()
	late.LateMessageRejectionPeriod = domain.Duration(time.Hour)
	late.EarlyMessageRejectionPeriod = domain.Duration(time.Hour)
	topic := jsonIO()
	topic.TopicDimension = "topic"
	backlog := backlogSchema(false)
	return withFormats(
		fuzzSpec{"declared", ds, jsonIO()},
		fuzzSpec{"rollup off", plain, jsonIO()},
		fuzzSpec{"filtered", filtered, late},
		fuzzSpec{"topic", ds, topic},
		fuzzSpec{"backlog", backlog, jsonIO()},
	)
}

var directSeeds = []string{
	`{"id":"e12","ts":"2026-12-07T10:00:00.123Z","page":"P3","browser":"chrome","country":"US","device":"mobile","action":"edit","delta":-12,"bytes":5123}`,
	`{"ts":"2024-02-29T12:34:56.789Z","page":"Main","user":"bob","n":3,"x":1.5,"bytes":10}`,
	`{"bytes":10,"x":2,"n":-0,"user":"bob","page":"Main","ts":1709210096789}`,
	`{"ts":"2024-02-29T12:34:56Z","page":"M\u00e9in","p\u00e9":"é","q\"\\":"q","user":"b\"ob"}`,
	`{"t\u0073":"2024-02-29","pag":"a","pages":"b","page":"c","page":"d"}`,
	"{\"ts\":\"2024-02-29\",\"page\":\"\xff\xfe\",\"user\":\"ok\",\"p\xe9\":\"x\",\"\xff\":1}",
	`{"ts":1709210096789,"page":1e3,"user":true,"n":01,"bytes":1}`,
	`{"ts":1709210096789,"page":[1, {"a": "b"}],"user":{"id": 7},"n":"12","bytes":"12"}`,
	`{"ts":1709210096789,"n":9223372036854775807,"bytes":-9223372036854775808,"x":-0}`,
	`{"ts":1709210096789,"n":123456789012345678,"bytes":1234567890123456789,"x":1e400}`,
	`{"ts":1709210096789,"n":1.0,"bytes":1.5,"x":"NaN","page":null,"user":""}`,
	`{"ts":1709210096789,"n":-,"bytes":1}`,
	` { "ts" : 1709210096789 , "page" : "a" } `,
	`{"ts":1709210096789,"page":"a"} x`,
	"{\"ts\":1709210096789,\"page\":\"a\tb\"}",
	`{"ts":"1709210096","page":"Main","bytes":10}`,
	`{"ts":1,"page":"Main"}`,
	`{"ts":null}`,
	`{"ts":1709210096789,}`,
	`{"ts":1709210096789,"page":"\ud800"}`,
	`{"tsX:1709210096789, "page":"a"}`,
}

// TestDirectTaken: the specs the direct path takes, and some it leaves to
// the general path.
func TestDirectTaken(t *testing.T) {
	for _, s := range directSpecs() {
		require.True(t, parse.TakesDirect(mustNew(t, s.ds, s.io)), s.name)
	}
	declared, discovered := fuzzSchemas()
	require.False(t, parse.TakesDirect(mustNew(t, discovered, jsonIO())), "discovery")
	require.False(t, parse.TakesDirect(mustNew(t, declared, csvIO(",", false, "ts", "page"))), "csv")
	flat := jsonIO()
	flat.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{{Type: "path", Name: "uid", Expr: "$.user.id"}}}
	require.False(t, parse.TakesDirect(mustNew(t, declared, flat)), "flattenSpec")
	kafka := domain.IOConfig{Topic: "t", InputFormat: domain.InputFormat{Type: domain.InputKafka, RecordFormats: domain.RecordFormats{ValueFormat: &domain.InputFormat{Type: domain.InputJSON}}}}
	require.False(t, parse.TakesDirect(mustNew(t, declared, kafka)), "kafka format")
	other := declared
	other.Filter = &domain.Filter{Type: "selector", Dimension: "bytes", Value: "1"}
	require.False(t, parse.TakesDirect(mustNew(t, other, jsonIO())), "filter on a field that is not a dimension")
}

// TestDirectIsGeneralOnSeeds runs FuzzDirectIsGeneral's check on every
// pair of its seeds.
func TestDirectIsGeneralOnSeeds(t *testing.T) {
	for _, a := range directSeeds {
		for _, b := range directSeeds {
			checkDirectIsGeneral(t, []byte(a), []byte(b))
		}
	}
}

// FuzzDirectIsGeneral: whatever two messages, parsed one after the other
// (the second with the key positions the first left), the direct path
// gives the general path's rows and errors, through Parse and
// ParseRecordView.
func FuzzDirectIsGeneral(f *testing.F) {
	for i, a := range directSeeds {
		f.Add([]byte(a), []byte(directSeeds[(i+1)%len(directSeeds)]))
	}
	for _, s := range jsonSeeds {
		f.Add([]byte(directSeeds[0]), []byte(s))
	}
	f.Fuzz(checkDirectIsGeneral)
}

func checkDirectIsGeneral(t *testing.T, a, b []byte) {
	for _, s := range directSpecs() {
		direct, general := mustNew(t, s.ds, s.io), mustNew(t, s.ds, s.io)
		directView, generalView := mustNew(t, s.ds, s.io), mustNew(t, s.ds, s.io)
		parse.WithoutDirect(general)
		parse.WithoutDirect(generalView)
		for _, p := range []*parse.Parser{direct, general, directView, generalView} {
			p.SetTopic("edits")
		}
		for _, msg := range [][]byte{a, b, a} {
			want, wantErr := parseRows(general, string(msg))
			got, err := parseRows(direct, string(msg))
			if fmt.Sprintf("%T %v", err, err) != fmt.Sprintf("%T %v", wantErr, wantErr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: Parse(%q): direct %v, %+v; general %v, %+v", s.name, msg, err, got, wantErr, want)
			}
			wantView, wantErr := viewParse(generalView, msg)
			gotView, err := viewParse(directView, msg)
			if fmt.Sprintf("%T %v", err, err) != fmt.Sprintf("%T %v", wantErr, wantErr) || !reflect.DeepEqual(gotView, wantView) {
				t.Fatalf("%s: ParseRecordView(%q): direct %v, %+v; general %v, %+v", s.name, msg, err, gotView, wantErr, wantView)
			}
		}
	}
}

// TestDirectManyKeys: messages of more members than the key cache notes
// positions for, and more distinct keys than it lists, parse as the
// general path parses them.
func TestDirectManyKeys(t *testing.T) {
	var msgs [][]byte
	for m := range 6 {
		msg := []byte(`{"ts":"2024-02-29T12:34:56.789Z"`)
		for k := range 300 {
			msg = fmt.Appendf(msg, `,"k%d_%d":%d`, m%5, k, k)
			if k == 280 {
				msg = append(msg, `,"page":"P","bytes":7`...)
			}
		}
		msgs = append(msgs, append(msg, '}'))
	}
	for i := range msgs {
		checkDirectIsGeneral(t, msgs[i], msgs[(i+1)%len(msgs)])
	}
}
