package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// A single-topic supervisor's partitions and offsets are written exactly
// as before partitions carried topics: recorded histories and stored
// payloads read back unchanged.
func TestSingleTopicPartitionsWriteAsBareNumbers(t *testing.T) {
	seq := domain.Sequence{ID: 3, Start: domain.Offsets{domain.P(0): 10, domain.P(10): 7, domain.P(2): 5}}
	b, err := json.Marshal(seq)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":3,"start":{"0":10,"10":7,"2":5}}`, string(b))
	require.Equal(t, `{"id":3,"start":{"0":10,"10":7,"2":5}}`, string(b), "keys in the order encoding/json gave int32 keys")

	b, err = json.Marshal([]domain.Partition{domain.P(0), domain.P(2)})
	require.NoError(t, err)
	require.Equal(t, `[0,2]`, string(b))

	var back struct {
		Partitions []domain.Partition `json:"partitions"`
		Offsets    domain.Offsets     `json:"offsets"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"partitions":[0,1],"offsets":{"1":40}}`), &back))
	require.Equal(t, []domain.Partition{domain.P(0), domain.P(1)}, back.Partitions)
	require.Equal(t, domain.Offsets{domain.P(1): 40}, back.Offsets)
}

// A topicPattern supervisor's partitions carry their topic, as "topic:N".
func TestPatternPartitionsCarryTheirTopic(t *testing.T) {
	o := domain.Offsets{domain.TP("orders.eu", 1): 5, domain.TP("orders.ap", 0): 9}
	b, err := json.Marshal(o)
	require.NoError(t, err)
	require.Equal(t, `{"orders.ap:0":9,"orders.eu:1":5}`, string(b))
	var back domain.Offsets
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, o, back)

	b, err = json.Marshal([]domain.Partition{domain.TP("a-b_c.d", 12)})
	require.NoError(t, err)
	require.Equal(t, `["a-b_c.d:12"]`, string(b))

	require.Equal(t, []domain.Partition{domain.TP("orders.ap", 0), domain.TP("orders.eu", 1)}, o.Partitions())
	require.Equal(t, "orders.ap:0:9,orders.eu:1:5", o.String())
	require.Equal(t, []string{"orders.ap", "orders.eu"}, o.Topics())
	require.Equal(t, domain.Offsets{domain.TP("orders.eu", 1): 5}, o.OfTopic("orders.eu"))

	for _, bad := range []string{":1", "x:", "x:-1", "x:y", "", "1.5"} {
		_, err := domain.ParsePartition(bad)
		require.Error(t, err, bad)
	}
	require.Error(t, json.Unmarshal([]byte(`[true]`), &[]domain.Partition{}))
}

// Single-topic groups stay p % taskCount; a pattern's topics each start at
// a group of their own, and adding a topic moves no other partition.
func TestGroupOfIsStable(t *testing.T) {
	for p := range int32(9) {
		require.Equal(t, int(p)%4, domain.GroupOf(domain.P(p), 4))
	}
	first := map[int]bool{}
	for _, topic := range []string{"orders.eu", "orders.us", "orders.ap", "orders.sa"} {
		g0 := domain.GroupOf(domain.TP(topic, 0), 4)
		first[g0] = true
		for p := range int32(8) {
			require.Equal(t, (g0+int(p))%4, domain.GroupOf(domain.TP(topic, p), 4), "round-robin from the topic's own group")
		}
	}
	require.Greater(t, len(first), 1, "topics do not all start at one group")
	require.Equal(t, domain.GroupOf(domain.TP("orders.eu", 3), 5), domain.GroupOf(domain.TP("orders.eu", 3), 5))
}

func TestTopicPatternValidation(t *testing.T) {
	base := func() domain.Spec {
		s := validSpec()
		s.IOConfig.Topic = ""
		s.IOConfig.TopicPattern = `orders\..*`
		return s
	}
	s := base()
	require.NoError(t, s.Validate())
	require.True(t, s.IOConfig.Matches("orders.eu"))
	require.False(t, s.IOConfig.Matches("xorders.eu"), "the whole name must match")
	require.False(t, s.IOConfig.Matches("orders"), "the whole name must match")
	require.Equal(t, []string{"orders.ap", "orders.eu"}, s.IOConfig.MatchingTopics([]string{"orders.eu", "audit", "orders.ap", "orders.eu"}))
	require.Equal(t, `/orders\..*/`, s.IOConfig.Source())

	for _, tc := range []struct {
		edit func(*domain.Spec)
		path string
		msg  string
	}{
		{func(s *domain.Spec) { s.IOConfig.TopicPattern = "" }, "ioConfig.topic", "or ioConfig.topicPattern"},
		{func(s *domain.Spec) { s.IOConfig.Topic = "orders" }, "ioConfig.topicPattern", "not both"},
		{func(s *domain.Spec) { s.IOConfig.TopicPattern = "orders(" }, "ioConfig.topicPattern", "not a regular expression"},
		{func(s *domain.Spec) { s.IOConfig.DeadLetterTopic = "orders.dlq" }, "ioConfig.deadLetterTopic", "matches ioConfig.topicPattern"},
		{func(s *domain.Spec) { s.IOConfig.TopicDimension = s.DataSchema.TimestampSpec.Column }, "ioConfig.topicDimension", "reserved"},
		{func(s *domain.Spec) { s.IOConfig.TopicDimension = "__topic" }, "ioConfig.topicDimension", "reserved"},
	} {
		s := base()
		tc.edit(&s)
		err := s.Validate()
		var fe *domain.FieldError
		require.ErrorAs(t, err, &fe, tc.path)
		require.Equal(t, tc.path, fe.Path)
		require.Contains(t, fe.Msg, tc.msg)
	}
	s = base()
	s.DataSchema.DimensionsSpec.Dimensions = []domain.DimensionSpec{{Name: "page"}}
	s.IOConfig.TopicDimension = "page"
	var fe *domain.FieldError
	require.ErrorAs(t, s.Validate(), &fe)
	require.Equal(t, "ioConfig.topicDimension", fe.Path)
	require.Contains(t, fe.Msg, "already a declared dimension")
	s.IOConfig.TopicDimension = "topic"
	require.NoError(t, s.Validate())
}

func validSpec() domain.Spec {
	s, err := domain.ParseSpec([]byte(minimalSpec))
	if err != nil {
		panic(err)
	}
	return s
}
