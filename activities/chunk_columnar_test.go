package activities

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/parse"
	"handoff/internal/protocol"
	"handoff/internal/rollup"
)

// TestColumnarChunkMatchesRowPath feeds the same records to a chunk on
// the columnar path (declared dimensions: views into column builders)
// and to one held on the row path, and requires the same staging files,
// byte for byte, and the same bookkeeping: counts, end offsets, saved
// parse errors with their offsets and messages, dead letters, and Len
// and Bytes after every record, so chunks end at the same records. The
// records mix good rows with late, early and filtered ones, unparseable
// ones (bad JSON, bad times, bad numbers, a bad sketch), escapes, invalid
// UTF-8, nested values and numbers where strings go; the specs cover
// JSON, CSV and the kafka format, flattenSpec, the topic dimension, a
// filter, long and double dimensions, every aggregator, rollup on and
// off. Schemaless discovery stays on the row path: its case checks that.
func TestColumnarChunkMatchesRowPath(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, tc := range columnarCases() {
		for _, rollupOn := range []bool{false, true} {
			name := fmt.Sprintf("%s/rollup=%v", tc.name, rollupOn)
			spec := tc.spec(rollupOn)
			for seed := range uint64(4) {
				recs := tc.records(rand.New(rand.NewPCG(seed, 38)), now)
				rowRuns, rowChunk := stageAll(t, spec, recs, now, true)
				colRuns, colChunk := stageAll(t, spec, recs, now, false)
				require.Equal(t, len(rowRuns), len(colRuns), name)
				for i := range rowRuns {
					require.True(t, bytes.Equal(rowRuns[i], colRuns[i]), "%s seed %d: staging file %d differs", name, seed, i)
				}
				require.Equal(t, rowChunk, colChunk, "%s seed %d", name, seed)
				require.GreaterOrEqual(t, len(rowRuns), 2, "%s: several chunks", name)
				if seed == 0 {
					t.Logf("%s: %d staging files, %d records, %d unparseable, %d thrown away", name, len(rowRuns), rowChunk.Records, rowChunk.Unparseable, rowChunk.ThrownAway)
				}
			}
		}
	}
}

// chunkLog is what a chunk reports besides its rows.
type chunkLog struct {
	Records, Unparseable, ThrownAway, Rows int64
	To                                     domain.Offsets
	Saved                                  []string
	DeadLetters                            []string
	Sizes                                  []string // Len and Bytes after each record
}

// stageAll adds recs to chunks of spec, staging one whenever it is full,
// on the row path or the columnar one, and returns the staging files.
func stageAll(t *testing.T, spec domain.Spec, recs []kafka.Record, now time.Time, rowPath bool) ([][]byte, chunkLog) {
	t.Helper()
	parser, err := parse.New(spec.DataSchema, spec.IOConfig)
	require.NoError(t, err)
	var runs [][]byte
	var log chunkLog
	var c *chunk
	stage := func() {
		if c.buf.Len() > 0 {
			// As writeChunk stages it: the columnar chunk's columns go
			// to the run writer as they are (WriteColumns), the row
			// path's rows through Write. A retried Put writes again.
			var b, again bytes.Buffer
			s := c.stage()
			require.Equal(t, !rowPath && parser.FixedDims(), s.cols != nil, "columns staged")
			info, err := s.write(&b)
			require.NoError(t, err)
			_, err = s.write(&again)
			require.NoError(t, err)
			require.Equal(t, b.Bytes(), again.Bytes(), "staged twice")
			s.release()
			runs = append(runs, b.Bytes())
			log.Rows += info.Rows
		}
		log.Records += c.records
		log.Unparseable += c.unparseable
		log.ThrownAway += c.thrownAway
		for _, e := range c.saved {
			log.Saved = append(log.Saved, fmt.Sprintf("%d@%d %s %q", e.Partition, e.Offset, e.Error, e.Message))
		}
		for _, m := range c.deadLetters {
			log.DeadLetters = append(log.DeadLetters, fmt.Sprint(m.Headers, string(m.Value)))
		}
		log.To = c.to
		c = nil
	}
	p := domain.P(0)
	for _, r := range recs {
		if c == nil {
			from := domain.Offsets{p: r.Offset}
			if log.To != nil {
				from = log.To
			}
			c = &chunk{in: protocol.ConsumeInput{Spec: spec}, parser: parser, to: from.Clone(), run: &running{},
				buf: rollup.New(spec.DataSchema.MetricsSpec, spec.DataSchema.GranularitySpec.RollupOn()), rowPath: rowPath}
		}
		require.NoError(t, c.add(p, r, now))
		log.Sizes = append(log.Sizes, fmt.Sprint(c.buf.Len(), c.buf.Bytes()))
		if c.full() {
			stage()
		}
	}
	if c != nil {
		stage()
	}
	return runs, log
}

type columnarCase struct {
	name    string
	spec    func(rollup bool) domain.Spec
	records func(rng *rand.Rand, now time.Time) []kafka.Record
}

func columnarSpec(rollupOn bool, dims []domain.DimensionSpec, in domain.InputFormat) domain.Spec {
	spec := domain.Spec{
		ID: "col",
		DataSchema: domain.DataSchema{
			DataSource:     "col",
			TimestampSpec:  domain.TimestampSpec{Column: "ts", Format: "auto"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: dims},
			MetricsSpec: []domain.MetricSpec{
				{Type: domain.MetricCount, Name: "events"},
				{Type: domain.MetricLongSum, Name: "delta", FieldName: "delta"},
				{Type: domain.MetricLongMax, Name: "maxDelta", FieldName: "delta"},
				{Type: domain.MetricDoubleSum, Name: "score", FieldName: "x"},
				{Type: domain.MetricDoubleMin, Name: "minScore", FieldName: "x"},
				{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"},
			},
			GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, Rollup: &rollupOn},
		},
		IOConfig: domain.IOConfig{Topic: "col", InputFormat: in, DeadLetterTopic: "col-dlq",
			LateMessageRejectionPeriod: domain.Duration(2 * time.Hour), EarlyMessageRejectionPeriod: domain.Duration(time.Hour)},
		TuningConfig: domain.TuningConfig{MaxRowsInMemory: 97, MaxSavedParseExceptions: 1000},
	}
	if rollupOn {
		spec.DataSchema.GranularitySpec.QueryGranularity = domain.GranularityMinute
	}
	spec.ApplyDefaults()
	return spec
}

var declaredDims = []domain.DimensionSpec{{Name: "page"}, {Name: "n", Type: domain.TypeLong}, {Name: "country"}, {Name: "x", Type: domain.TypeDouble}, {Name: "user"}}

func columnarCases() []columnarCase {
	json := func(rng *rand.Rand, now time.Time) []kafka.Record { return jsonRecords(rng, now, false) }
	return []columnarCase{
		{"json", func(r bool) domain.Spec {
			return columnarSpec(r, declaredDims, domain.InputFormat{Type: domain.InputJSON})
		}, json},
		{"json-filter", func(r bool) domain.Spec {
			s := columnarSpec(r, declaredDims, domain.InputFormat{Type: domain.InputJSON})
			s.DataSchema.Filter = &domain.Filter{Type: "selector", Dimension: "country", Value: "FR"}
			return s
		}, json},
		{"json-topic", func(r bool) domain.Spec {
			s := columnarSpec(r, declaredDims[:3], domain.InputFormat{Type: domain.InputJSON})
			s.IOConfig.TopicDimension = "topic"
			return s
		}, json},
		{"json-flatten", func(r bool) domain.Spec {
			dims := append([]domain.DimensionSpec{{Name: "inner"}, {Name: "first", Type: domain.TypeLong}}, declaredDims...)
			return columnarSpec(r, dims, domain.InputFormat{Type: domain.InputJSON, FlattenSpec: &domain.FlattenSpec{Fields: []domain.FlattenField{
				{Type: "path", Name: "inner", Expr: "$.obj.k"}, {Type: "path", Name: "first", Expr: "$.arr[0]"}}}})
		}, json},
		{"json-discovery", func(r bool) domain.Spec { return columnarSpec(r, nil, domain.InputFormat{Type: domain.InputJSON}) }, json},
		{"csv", func(r bool) domain.Spec {
			return columnarSpec(r, declaredDims, domain.InputFormat{Type: domain.InputCSV, Columns: []string{"ts", "page", "n", "country", "x", "user", "delta"}})
		}, csvRecords},
		{"kafka", func(r bool) domain.Spec {
			dims := append([]domain.DimensionSpec{{Name: "kafka.key"}, {Name: "kafka.header.h"}}, declaredDims...)
			return columnarSpec(r, dims, domain.InputFormat{Type: domain.InputKafka, RecordFormats: domain.RecordFormats{ValueFormat: &domain.InputFormat{Type: domain.InputJSON}}})
		}, func(rng *rand.Rand, now time.Time) []kafka.Record { return jsonRecords(rng, now, true) }},
	}
}

// pick returns one of vs, the first ones more often.
func pick[T any](rng *rand.Rand, vs ...T) T { return vs[min(rng.IntN(len(vs)), rng.IntN(len(vs)))] }

func jsonRecords(rng *rand.Rand, now time.Time, kafkaFields bool) []kafka.Record {
	var recs []kafka.Record
	for i := range 700 {
		ts := now.Add(time.Duration(rng.IntN(3*3600)-5400) * time.Second).Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
		tsText := pick(rng, `"`+ts.Format("2006-01-02T15:04:05.000Z")+`"`, strconv.FormatInt(ts.UnixMilli(), 10),
			`"`+ts.Format(time.RFC3339Nano)+`"`, `"`+ts.In(time.FixedZone("", 5400)).Format(time.RFC3339)+`"`,
			`"`+now.Add(-30*time.Hour).Format(time.RFC3339)+`"`, `"`+now.Add(5*time.Hour).Format(time.RFC3339)+`"`,
			`"not a time"`, `null`, `"`+ts.Format("2006-01-02")+`"`)
		fields := []string{`"ts":` + tsText}
		add := func(name string, vals ...string) {
			if v := pick(rng, vals...); v != "" {
				fields = append(fields, `"`+name+`":`+v)
			}
		}
		add("page", `"P1"`, `"P2"`, `"P`+strconv.Itoa(rng.IntN(30))+`"`, `"Zürich"`, `"a\"b\u00e9"`, "\"bad\xff\"", `""`, `null`, `12`, `true`, `{"a": [1, 2]}`, `[1,"x"]`, ``)
		add("n", `1`, `2`, `"3"`, `-0`, `4.0`, `1e2`, `""`, `null`, `"x"`, `1.5`, ``)
		add("country", `"FR"`, `"DE"`, `"US"`, `"FR"`, `null`, ``)
		add("x", `0.5`, `-0.0`, `0`, `"2.5"`, `1e308`, `null`, `"NaN"`, ``)
		add("user", `"u1"`, `"u2"`, `"u`+strconv.Itoa(rng.IntN(50))+`"`, `null`, ``)
		add("delta", `1`, `-5`, `"7"`, `9223372036854775807`, `2.0`, `null`, `"x"`, `1.5`, ``)
		add("obj", `{"k":"v1"}`, `{"k":"v2","z":1}`, `{"k":{"deep":true}}`, `{}`, `[]`, ``)
		add("arr", `[1,2]`, `[7]`, `[]`, `["s"]`, ``)
		add("extra", `"e"`, `{"n":{"m":[1,{"o":null}]}}`, ``)
		add("topic", `"from-message"`, ``)
		rng.Shuffle(len(fields), func(a, b int) { fields[a], fields[b] = fields[b], fields[a] })
		v := []byte("{" + joinComma(fields) + "}")
		switch rng.IntN(40) {
		case 0:
			v = v[:rng.IntN(len(v))] // cut short
		case 1:
			v = []byte(`[1,2]`)
		case 2:
			v = nil // a tombstone
		case 3:
			v = append(v, " {}"...)
		}
		r := kafka.Record{Offset: int64(i), Value: v, Time: ts}
		if kafkaFields {
			r.Key = []byte(pick(rng, "k1", "k2", ""))
			if rng.IntN(3) > 0 {
				r.Headers = map[string]string{"h": pick(rng, "a", "b", "c"), "other": "o"}
			}
		}
		recs = append(recs, r)
	}
	return recs
}

func csvRecords(rng *rand.Rand, now time.Time) []kafka.Record {
	var recs []kafka.Record
	for i := range 700 {
		var lines []byte
		for range 1 + rng.IntN(3) {
			ts := now.Add(time.Duration(rng.IntN(3*3600)-5400) * time.Second)
			lines = fmt.Appendf(lines, "%s,%s,%s,%s,%s,%s,%s\n",
				pick(rng, ts.Format(time.RFC3339), strconv.FormatInt(ts.UnixMilli(), 10), "bad", now.Add(-30*time.Hour).Format(time.RFC3339)),
				pick(rng, "P1", "P2", "\"q,1\"", "", "Zürich"), pick(rng, "1", "2", "", "x"), pick(rng, "FR", "DE", ""),
				pick(rng, "0.5", "-0", "", "y"), pick(rng, "u1", "u2", "u3"), pick(rng, "1", "-2", "", "z"))
		}
		recs = append(recs, kafka.Record{Offset: int64(i), Value: lines, Time: now})
	}
	return recs
}

func joinComma(fs []string) string {
	var b []byte
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f...)
	}
	return string(b)
}
