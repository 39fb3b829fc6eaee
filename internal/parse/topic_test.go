package parse_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/rollup"
)

func withTopicDim(io domain.IOConfig, name string) domain.IOConfig {
	io.TopicDimension = name
	return io
}

// Declared dimensions: the topic is the last one, set per SetTopic, and a
// message field of the same name does not override it.
func TestTopicDimensionIsTheLastDeclaredDimension(t *testing.T) {
	p := mustNew(t, schema("iso", "", "page"), withTopicDim(jsonIO(), "topic"))
	require.Equal(t, []domain.Column{{Name: "page", Type: domain.TypeString}, {Name: "topic", Type: domain.TypeString}}, p.Schema().Dims)

	rows, err := parseRows(p, `{"ts":"2024-02-29T12:00:00Z","page":"a"}`)
	require.NoError(t, err)
	require.Equal(t, []domain.Value{sv("a"), null}, rows[0].Dims, "no topic set yet: null")

	p.SetTopic("orders.eu")
	rows, err = parseRows(p, `{"ts":"2024-02-29T12:00:00Z","page":"a","topic":"forged"}`)
	require.NoError(t, err)
	require.Equal(t, []domain.Value{sv("a"), sv("orders.eu")}, rows[0].Dims)

	p.SetTopic("orders.us")
	rows, err = parseRows(p, `{"ts":"2024-02-29T12:00:00Z","page":"b"}`)
	require.NoError(t, err)
	require.Equal(t, []domain.Value{sv("b"), sv("orders.us")}, rows[0].Dims)
}

// Discovery: the topic is the first dimension from the start, every row
// has it, and a field of that name is never discovered.
func TestTopicDimensionIsTheFirstDiscoveredDimension(t *testing.T) {
	p := mustNew(t, schema("iso", ""), withTopicDim(jsonIO(), "src"))
	require.Equal(t, []domain.Column{{Name: "src", Type: domain.TypeString}}, p.Schema().Dims)
	p.SetTopic("orders.eu")
	rows, err := parseRows(p, `{"ts":"2024-02-29T12:00:00Z"}`)
	require.NoError(t, err)
	require.Equal(t, []domain.Value{sv("orders.eu")}, rows[0].Dims, "a row with no field still has its topic")

	rows, err = parseRows(p, `{"ts":"2024-02-29T12:00:00Z","src":"forged","page":"a"}`)
	require.NoError(t, err)
	require.Equal(t, []domain.Value{sv("orders.eu"), sv("a")}, rows[0].Dims)
	require.Equal(t, []domain.Column{{Name: "src", Type: domain.TypeString}, {Name: "page", Type: domain.TypeString}}, p.Schema().Dims)
}

// A flattened field named like the topic dimension is not a second column.
func TestTopicDimensionWinsOverAFlattenedField(t *testing.T) {
	io := withTopicDim(jsonIO(), "topic")
	io.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{{Type: "path", Name: "topic", Expr: "$.meta.topic"}}}
	p := mustNew(t, schema("iso", ""), io)
	p.SetTopic("orders.eu")
	rows, err := parseRows(p, `{"ts":"2024-02-29T12:00:00Z","meta":{"topic":"forged"},"page":"a"}`)
	require.NoError(t, err)
	require.Equal(t, "orders.eu", rows[0].Dims[0].S)
	names := []string{}
	for _, c := range p.Schema().Dims {
		names = append(names, c.Name)
	}
	require.Equal(t, 1, countOf(names, "topic"), "columns %v", names)
}

func countOf(names []string, name string) int {
	n := 0
	for _, x := range names {
		if x == name {
			n++
		}
	}
	return n
}

// Rows of two topics never combine under rollup.
func TestTopicDimensionKeepsTopicsApartUnderRollup(t *testing.T) {
	ds := schema("iso", domain.GranularityHour, "page")
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "n"}}
	p := mustNew(t, ds, withTopicDim(jsonIO(), "topic"))
	buf := rollup.New(ds.MetricsSpec, true)
	for _, topic := range []string{"a", "b", "a"} {
		p.SetTopic(topic)
		rows, err := parseRows(p, `{"ts":"2024-02-29T12:00:00Z","page":"x"}`)
		require.NoError(t, err)
		for _, r := range rows {
			require.NoError(t, buf.Add(r))
		}
	}
	require.Equal(t, 2, buf.Len(), "one row per topic")
}

// CSV rows carry the topic too.
func TestTopicDimensionWithCSV(t *testing.T) {
	p := mustNew(t, schema("iso", "", "page"), withTopicDim(csvIO(",", false, "ts", "page"), "topic"))
	p.SetTopic("clicks")
	rows, err := parseRows(p, "2024-02-29T12:00:00Z,a\n2024-02-29T12:00:01Z,b")
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.Equal(t, sv("clicks"), r.Dims[1])
	}
}

// Without a topic dimension, SetTopic changes nothing.
func TestNoTopicDimensionIgnoresSetTopic(t *testing.T) {
	p := mustNew(t, schema("iso", "", "page"), jsonIO())
	p.SetTopic("orders.eu")
	rows, err := parseRows(p, `{"ts":"2024-02-29T12:00:00Z","page":"a","topic":"x"}`)
	require.NoError(t, err)
	require.Equal(t, []domain.Value{sv("a")}, rows[0].Dims)
	require.Len(t, p.Schema().Dims, 1)
}
