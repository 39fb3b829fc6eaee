package parse_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

const equivSchema = `{"type":"record","name":"Hit","fields":[
 {"name":"id","type":"string"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"page","type":["null","string"]},
 {"name":"n","type":"long"},
 {"name":"amount","type":"string"},
 {"name":"ok","type":"boolean"},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"user","type":{"type":"record","name":"User","fields":[{"name":"name","type":"string"}]}}]}`

// Record by record, an Avro parser makes the rows (and discovers the
// schema) the JSON parser makes of the same records, including records
// that fail after discovering fields (a metric that is no number) and
// records thrown away (late): what the decoded path remembers per field
// stays right across both.
func TestAvroRowsMatchJSONRecordByRecord(t *testing.T) {
	reg := srfake.New()
	t.Cleanup(reg.Close)
	id, _, err := reg.RegisterSchema("hits-value", sr.Schema{Schema: equivSchema})
	require.NoError(t, err)
	s := avro.MustParse(equivSchema)
	io := registryIO(domain.InputAvroStream, reg)
	io.LateMessageRejectionPeriod = domain.Duration(time.Hour)
	jio := jsonIO()
	jio.LateMessageRejectionPeriod = io.LateMessageRejectionPeriod

	declared := schema("auto", domain.GranularityMinute, "id", "page", "tags", "user", "ok")
	declared.DimensionsSpec.Dimensions = append(declared.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "n", Type: domain.TypeLong})
	discovery := schema("auto", domain.GranularityMinute)
	discovery.DimensionsSpec.DimensionExclusions = []string{"ok"}
	for name, ds := range map[string]domain.DataSchema{"declared": declared, "discovery": discovery} {
		t.Run(name, func(t *testing.T) {
			ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "sum", FieldName: "amount"}}
			ap, jp := mustNew(t, ds, io), mustNew(t, ds, jio)
			r := rand.New(rand.NewPCG(5, 6))
			for i := range 400 {
				rec := map[string]any{
					"id": fmt.Sprintf("e-%d", i), "ts": now.Add(-time.Duration(r.IntN(90)) * time.Minute).Truncate(time.Millisecond),
					"page": nil, "n": r.Int64N(1000) - 500, "amount": fmt.Sprint(r.IntN(100)), "ok": r.IntN(2) == 0,
					"tags": []any{}, "user": map[string]any{"name": "u" + fmt.Sprint(r.IntN(3))},
				}
				if r.IntN(2) == 0 {
					rec["page"] = "P" + fmt.Sprint(r.IntN(5))
				}
				if i < 2 || r.IntN(5) == 0 {
					rec["amount"] = "not a number" // fails after discovering the record's fields
				}
				for range r.IntN(3) {
					rec["tags"] = append(rec["tags"].([]any), "t"+fmt.Sprint(r.IntN(4)))
				}
				msg, err := sr.Encode(rec, &sr.ConfluentHeader{}, id, nil, func(v any) ([]byte, error) { return avro.Marshal(s, v) })
				require.NoError(t, err)
				arows, aerr := parseAll(ap, msg)
				jrows, jerr := parseAll(jp, equivJSON(t, rec))
				require.Equal(t, errKind(jerr), errKind(aerr), "record %d: %v / %v", i, jerr, aerr)
				require.Equal(t, jrows, arows, "record %d", i)
				require.Equal(t, jp.Schema(), ap.Schema(), "record %d", i)
			}
		})
	}
}

// equivJSON is the record as a JSON producer would write it, its fields
// in the schema's order and its time in ISO 8601.
func equivJSON(t *testing.T, rec map[string]any) []byte {
	var b []byte
	for i, f := range []string{"id", "ts", "page", "n", "amount", "ok", "tags", "user"} {
		v := rec[f]
		if ts, ok := v.(time.Time); ok {
			v = ts.UTC().Format(time.RFC3339Nano)
		}
		j, err := json.Marshal(v)
		require.NoError(t, err)
		b = append(b, ","[:min(i, 1)]...)
		b = append(b, fmt.Sprintf("%q:%s", f, j)...)
	}
	return append(append([]byte{'{'}, b...), '}')
}

func parseAll(p *parse.Parser, msg []byte) ([]domain.Row, error) {
	var rows []domain.Row
	err := p.Parse(msg, now, func(r domain.Row) { rows = append(rows, r) })
	return rows, err
}

func errKind(err error) string {
	var bad *parse.UnparseableError
	var rej *parse.RejectedError
	switch {
	case err == nil:
		return "none"
	case errors.As(err, &bad):
		return "unparseable"
	case errors.As(err, &rej):
		return "rejected " + string(rej.Reason)
	}
	return err.Error()
}
