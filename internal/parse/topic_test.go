package parse_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/rollup"
)

func withTopicDim(io domain.IOConfig, name string) domain.IOConfig {
	io.TopicDimension = name
	return io
}

func str(name string) domain.Column { return domain.Column{Name: name, Type: domain.TypeString} }

const topicTS = `"ts":"2024-02-29T12:00:00Z"`

// Declared dimensions: the topic is the last one, null until SetTopic,
// then the topic last set; a message field of the same name is not read.
func TestTopicDimensionIsTheLastDeclaredDimension(t *testing.T) {
	t.Parallel()
	ds := schema("iso", "", "page")
	ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "n", Type: domain.TypeLong})
	p := mustNew(t, ds, withTopicDim(jsonIO(), "topic"))
	want := []domain.Column{str("page"), {Name: "n", Type: domain.TypeLong}, str("topic")}
	require.Equal(t, want, p.Schema().Dims)

	row := parseOne(t, p, `{`+topicTS+`,"page":"a","n":1,"topic":"forged"}`)
	require.Equal(t, []domain.Value{sv("a"), lv(1), null}, row.Dims, "no topic set yet: null, as a missing field")

	for _, topic := range []string{"orders.eu", "orders.eu", "orders.us", "orders.eu"} {
		p.SetTopic(topic)
		row = parseOne(t, p, `{`+topicTS+`,"page":"b","topic":"forged"}`)
		require.Equal(t, []domain.Value{sv("b"), null, sv(topic)}, row.Dims)
	}

	p.SetTopic("")
	row = parseOne(t, p, `{`+topicTS+`,"page":"c"}`)
	require.Equal(t, []domain.Value{sv("c"), null, null}, row.Dims, `SetTopic("") is null`)
	require.Equal(t, want, p.Schema().Dims, "the schema does not change")
}

// Discovery: the topic is the first dimension from the start, every row
// has it, and a field of that name is never discovered nor overrides it.
func TestTopicDimensionIsTheFirstDiscoveredDimension(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("iso", ""), withTopicDim(jsonIO(), "src"))
	require.Equal(t, []domain.Column{str("src")}, p.Schema().Dims)

	row := parseOne(t, p, `{`+topicTS+`}`)
	require.Equal(t, null, row.Dim(0), "no topic set yet: null")

	p.SetTopic("orders.eu")
	row = parseOne(t, p, `{`+topicTS+`}`)
	require.Equal(t, []domain.Value{sv("orders.eu")}, row.Dims, "a row with no field still has its topic")

	row = parseOne(t, p, `{"src":"forged",`+topicTS+`,"page":"a"}`)
	require.Equal(t, []domain.Value{sv("orders.eu"), sv("a")}, row.Dims)
	require.Equal(t, []domain.Column{str("src"), str("page")}, p.Schema().Dims)

	// A bad message forgets what it discovered, never the topic.
	unparseable(t, p, `{"src":"x","new":"y","ts":"never"}`)
	require.Equal(t, []domain.Column{str("src"), str("page")}, p.Schema().Dims)

	p.SetTopic("orders.us")
	row = parseOne(t, p, `{`+topicTS+`,"lang":"fr","src":"forged"}`)
	require.Equal(t, []domain.Value{sv("orders.us"), null, sv("fr")}, row.Dims)
	require.Equal(t, []domain.Column{str("src"), str("page"), str("lang")}, p.Schema().Dims)
}

// A flattened field named like the topic dimension is not a second column
// and does not override the topic.
func TestTopicDimensionWinsOverAFlattenedField(t *testing.T) {
	t.Parallel()
	io := withTopicDim(jsonIO(), "topic")
	io.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{
		{Type: "path", Name: "topic", Expr: "$.meta.topic"},
		{Type: "path", Name: "region", Expr: "$.meta.region"},
	}}
	p := mustNew(t, schema("iso", ""), io)
	p.SetTopic("orders.eu")
	row := parseOne(t, p, `{`+topicTS+`,"meta":{"topic":"7","region":"eu"},"page":"a"}`)
	require.Equal(t, []domain.Column{str("topic"), str("meta"), str("page"), str("region")}, p.Schema().Dims)
	require.Equal(t, []domain.Value{sv("orders.eu"), sv(`{"topic":"7","region":"eu"}`), sv("a"), sv("eu")}, row.Dims)
}

// Rows of two topics never combine under rollup; rows of one topic do.
func TestTopicDimensionKeepsTopicsApartUnderRollup(t *testing.T) {
	t.Parallel()
	for _, declared := range []bool{true, false} {
		ds := schema("iso", domain.GranularityHour)
		if declared {
			ds = schema("iso", domain.GranularityHour, "page")
		}
		ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "n"}}
		p := mustNew(t, ds, withTopicDim(jsonIO(), "topic"))
		buf := rollup.New(ds.MetricsSpec, true)
		for _, topic := range []string{"a", "b", "a", "a"} {
			p.SetTopic(topic)
			require.NoError(t, buf.Add(parseOne(t, p, `{`+topicTS+`,"page":"x","topic":"forged"}`)))
		}
		rows := buf.Rows(p.Schema().Dims)
		ti := len(p.Schema().Dims) - 1
		if !declared {
			ti = 0
		}
		require.Len(t, rows, 2, "one row per topic (declared %v)", declared)
		require.Equal(t, []domain.Value{sv("a"), sv("b")}, []domain.Value{rows[0].Dim(ti), rows[1].Dim(ti)})
		require.Equal(t, []domain.Value{lv(3)}, rows[0].Metrics)
		require.Equal(t, []domain.Value{lv(1)}, rows[1].Metrics)
	}
}

// CSV rows carry the topic too, declared or discovered; a column named
// like the topic dimension is not one.
func TestTopicDimensionWithCSV(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("iso", "", "page"), withTopicDim(csvIO(",", false, "ts", "page", "topic"), "topic"))
	p.SetTopic("clicks")
	rows, err := parseRows(p, "2024-02-29T12:00:00Z,a,forged\n2024-02-29T12:00:01Z,b,")
	require.NoError(t, err)
	require.Equal(t, [][]domain.Value{{sv("a"), sv("clicks")}, {sv("b"), sv("clicks")}}, [][]domain.Value{rows[0].Dims, rows[1].Dims})

	p = mustNew(t, schema("iso", ""), withTopicDim(csvIO(",", true), "topic"))
	p.SetTopic("views")
	rows, err = parseRows(p, "topic,ts,page\nforged,2024-02-29T12:00:00Z,a\n,2024-02-29T12:00:01Z,")
	require.NoError(t, err)
	require.Equal(t, []domain.Column{str("topic"), str("page")}, p.Schema().Dims)
	require.Equal(t, [][]domain.Value{{sv("views"), sv("a")}, {sv("views")}}, [][]domain.Value{rows[0].Dims, rows[1].Dims})
}

// A filter naming the topic dimension compares the topic, not a message
// field of that name.
func TestTopicDimensionFilter(t *testing.T) {
	t.Parallel()
	for _, ds := range []domain.DataSchema{schema("iso", "", "page"), schema("iso", "")} {
		ds.Filter = &domain.Filter{Type: "selector", Dimension: "topic", Value: "keep"}
		p := mustNew(t, ds, withTopicDim(jsonIO(), "topic"))
		p.SetTopic("keep")
		parseOne(t, p, `{`+topicTS+`,"page":"a","topic":"drop"}`)
		p.SetTopic("drop")
		_, err := parseRows(p, `{`+topicTS+`,"page":"a","topic":"keep"}`)
		require.ErrorContains(t, err, "filtered", "discovery %v", ds.Discovers())
	}
}

// The parser keeps its own copy of the topic, one per topic, and setting
// a topic it has seen allocates nothing. (Not parallel: AllocsPerRun.)
func TestSetTopicCopiesAndInterns(t *testing.T) {
	p := mustNew(t, schema("iso", "", "page"), withTopicDim(jsonIO(), "topic"))
	buf := []byte("orders.eu")
	p.SetTopic(unsafe.String(unsafe.SliceData(buf), len(buf)))
	first := parseOne(t, p, `{`+topicTS+`}`)
	copy(buf, "XXXXXXXXX")
	require.Equal(t, sv("orders.eu"), first.Dims[1], "the row does not alias the caller's topic")

	p.SetTopic("orders.us")
	p.SetTopic("orders.eu")
	again := parseOne(t, p, `{`+topicTS+`}`)
	require.Equal(t, sv("orders.eu"), again.Dims[1])
	require.Same(t, unsafe.StringData(first.Dims[1].S), unsafe.StringData(again.Dims[1].S), "one copy per topic")

	topics := []string{"orders.eu", "orders.eu", "orders.us"}
	i := 0
	require.Zero(t, testing.AllocsPerRun(100, func() { p.SetTopic(topics[i%3]); i++ }))
}

// Without a topic dimension SetTopic changes nothing, and a field named
// topic is an ordinary one.
func TestNoTopicDimensionIgnoresSetTopic(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("iso", "", "page"), jsonIO())
	p.SetTopic("orders.eu")
	row := parseOne(t, p, `{`+topicTS+`,"page":"a","topic":"x"}`)
	require.Equal(t, []domain.Value{sv("a")}, row.Dims)
	require.Equal(t, []domain.Column{str("page")}, p.Schema().Dims)

	p = mustNew(t, schema("iso", ""), jsonIO())
	require.Empty(t, p.Schema().Dims)
	p.SetTopic("orders.eu")
	row = parseOne(t, p, `{`+topicTS+`,"topic":"x","page":"a"}`)
	require.Equal(t, []domain.Value{sv("x"), sv("a")}, row.Dims)
	require.Equal(t, []domain.Column{str("topic"), str("page")}, p.Schema().Dims)
	row = parseOne(t, p, `{`+topicTS+`}`)
	require.Empty(t, row.Dims, "no fixed dimension")
}
