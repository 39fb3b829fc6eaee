package e2e

import (
	"context"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/segment"
	"handoff/workflows"
)

// TestTopicPatternReadsEveryMatchingTopicExactlyOnce reads three topics by
// ioConfig.topicPattern while a topic that does not match holds events too;
// mid-run a fourth matching topic is created and one of the three deleted
// (after its events were published). Every event of every matching topic
// is published exactly once, counted from the segments per topic (the
// rows' topic dimension says which), nothing of the other topic is, the
// deleted topic is in status with its committed offsets, and the stored
// offsets are each (topic, partition)'s end.
func TestTopicPatternReadsEveryMatchingTopicExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 0, activities.Faults{})
	ctx := context.Background()
	a, b, c, d, other := s.name+".a", s.name+".b", s.name+".c", s.name+".d", s.name+"-other"
	for topic, n := range map[string]int32{a: 2, b: 1, c: 3, other: 1} {
		require.NoError(t, s.broker.CreateTopic(ctx, topic, n))
	}
	spec := s.spec(2)
	spec.IOConfig.Topic, spec.IOConfig.TopicPattern = "", regexp.QuoteMeta(s.name)+`\.[a-z]`
	spec.IOConfig.TopicDimension = "topic"
	require.NoError(t, spec.Validate())

	gen := eventgen.New(s.name, 18)
	sent := map[string]int64{}
	produce := func(topic string, n int64) {
		t.Helper()
		got, err := gen.Produce(ctx, s.brokers, topic, 0, n, false)
		require.NoError(t, err)
		require.Equal(t, n, got)
		sent[topic] += n
	}
	produce(a, 1000)
	produce(b, 800)
	produce(c, 1200)
	// Events of another run in the topic that does not match: any of them
	// published is a row never produced to a matching topic.
	_, err := eventgen.New(s.name+"-other", 19).Produce(ctx, s.brokers, other, 0, 300, false)
	require.NoError(t, err)
	run := s.startSupervisor(spec)

	// b is published to its end, then deleted.
	bEnd := s.topicEnd(spec, b)
	s.publishTopic(spec, b, bEnd)
	require.NoError(t, s.broker.DeleteTopic(ctx, b))
	require.Eventually(t, func() bool {
		st := s.status(spec)
		return slices.ContainsFunc(st.DeletedTopics, func(x workflows.DeletedTopic) bool { return x.Topic == b }) &&
			!slices.Contains(st.Topics, b) && st.State == workflows.StateRunning && st.DetailedState == workflows.StateRunning
	}, 60*time.Second, 250*time.Millisecond, "the deleted topic was not reported, or the groups were not laid out again")
	st := s.status(spec)
	gone := st.DeletedTopics[slices.IndexFunc(st.DeletedTopics, func(x workflows.DeletedTopic) bool { return x.Topic == b })]
	require.Equal(t, bEnd, gone.Committed, "the deleted topic's committed offsets are kept")

	// d appears and is read from its earliest offset.
	require.NoError(t, s.broker.CreateTopic(ctx, d, 2))
	produce(d, 900)
	produce(a, 500)
	produce(c, 400)
	require.Eventually(t, func() bool {
		return slices.Equal(s.status(spec).Topics, []string{a, c, d})
	}, 30*time.Second, 250*time.Millisecond, "the new topic did not join")

	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	sup := s.historyEvents(workflows.SupervisorWorkflowID(spec.ID))
	groups := s.historyEvents(workflows.TaskGroupWorkflowID(spec.ID, 0)) + s.historyEvents(workflows.TaskGroupWorkflowID(spec.ID, 1))
	t.Logf("history events: supervisor %d, groups %d, for %d events over 4 topics, one created and one deleted", sup, groups, total(sent))
	s.recordHistories(spec)

	// Counted from the segments: each event once, under its own topic.
	byTopic, ids := s.publishedByTopic(spec)
	require.Equal(t, sent, byTopic, "rows per topic, from the segments")
	for id, n := range ids {
		require.Equal(t, 1, n, "event %s published %d times", id, n)
	}
	stored, err := s.store.TopicsOffsets(ctx, spec.DataSchema.DataSource, []string{a, b, c, d, other})
	require.NoError(t, err)
	wantStored := s.latest(spec)
	maps.Copy(wantStored, bEnd)
	require.Equal(t, wantStored, stored, "stored offsets must be each (topic, partition)'s end")
	// Every id once in the segments and in the Iceberg table (then read by
	// DuckDB), whose snapshot's offsets are the stored ones.
	s.requireTableExactlyOnce(spec, idRange(gen.RunID, total(sent)), stored)
	seen := s.publishedIDCounts(spec)
	requireEachOnce(t, seen, gen.RunID, total(sent))
}

func total(sent map[string]int64) int64 {
	var n int64
	for _, v := range sent {
		n += v
	}
	return n
}

// topicEnd is one topic's end offsets, named as a topicPattern names them.
func (s *stack) topicEnd(spec domain.Spec, topic string) domain.Offsets {
	s.t.Helper()
	return s.latest(spec).OfTopic(topic)
}

// publishTopic checkpoints until the stored offsets of topic are end.
func (s *stack) publishTopic(spec domain.Spec, topic string, end domain.Offsets) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		stored, err := s.store.TopicsOffsets(context.Background(), spec.DataSchema.DataSource, []string{topic})
		require.NoError(s.t, err)
		if stored.Equal(end) {
			return
		}
		require.True(s.t, time.Now().Before(deadline), "topic %s not published within 60s: stored %v, end %v", topic, stored, end)
		s.signal(spec, workflows.SignalCheckpoint, workflows.CheckpointSignal{})
		time.Sleep(500 * time.Millisecond)
	}
}

// publishedByTopic reads every used segment and counts its rows by their
// topic dimension, and each event id.
func (s *stack) publishedByTopic(spec domain.Spec) (byTopic map[string]int64, ids map[string]int) {
	s.t.Helper()
	segs, err := s.store.Segments(context.Background(), spec.DataSchema.DataSource)
	require.NoError(s.t, err)
	byTopic, ids = map[string]int64{}, map[string]int{}
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(s.t, err)
		schema, rows, err := segment.ReadFile(u.Path)
		require.NoError(s.t, err)
		col := func(name string) int {
			i := slices.IndexFunc(schema.Dims, func(c domain.Column) bool { return c.Name == name })
			require.GreaterOrEqual(s.t, i, 0, "segment %s has no %s column: %v", seg.ID, name, schema.Dims)
			return i
		}
		idCol, topicCol := col("id"), col(spec.IOConfig.TopicDimension)
		for _, r := range rows {
			byTopic[r.Dim(topicCol).S]++
			ids[r.Dim(idCol).S]++
		}
	}
	return byTopic, ids
}

// TestIdleTopicPatternCostsNoMoreHistory: a supervisor reading two topics
// by pattern writes no more supervisor history while idle than one
// reading one topic: the watch lists the topics at every look, and only a
// change reaches history.
func TestIdleTopicPatternCostsNoMoreHistory(t *testing.T) {
	t.Parallel()
	idle := map[string]int64{}
	var mu sync.Mutex
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"single", "pattern"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s := newStack(t, 2, activities.Faults{})
				spec := s.spec(1)
				gen := eventgen.New(s.name, 20)
				s.produce(gen, 500)
				if name == "pattern" {
					require.NoError(t, s.broker.CreateTopic(context.Background(), s.name+".x", 2))
					spec.IOConfig.Topic, spec.IOConfig.TopicPattern = "", regexp.QuoteMeta(s.name)+`(\.x)?`
					require.NoError(t, spec.Validate())
					_, err := gen.Produce(context.Background(), s.brokers, s.name+".x", 0, 500, false)
					require.NoError(t, err)
				}
				run := s.startSupervisor(spec)
				s.waitCaughtUp(spec)
				require.Eventually(t, func() bool { return s.status(spec).State == workflows.StateIdle }, time.Minute, 200*time.Millisecond)
				id := workflows.SupervisorWorkflowID(spec.ID)
				before := s.historyEvents(id)
				time.Sleep(20 * time.Second)
				n := s.historyEvents(id) - before
				t.Logf("%s: %d supervisor history events in 20 s idle", name, n)
				mu.Lock()
				idle[name] = n
				mu.Unlock()
				s.stopAndWait(spec, run)
				want := int64(500)
				if name == "pattern" {
					want = 1000
				}
				require.Equal(t, want, s.publishedOnce(spec), "events published, each once")
			})
		}
	})
	require.Contains(t, idle, "pattern")
	require.LessOrEqual(t, idle["pattern"], idle["single"], "reading by pattern must not add history at rest")
}

// publishedOnce counts the events in the used segments, failing on one
// published more than once.
func (s *stack) publishedOnce(spec domain.Spec) int64 {
	s.t.Helper()
	var n int64
	for id, c := range s.publishedIDCounts(spec) {
		require.Equal(s.t, 1, c, "event %s published %d times", id, c)
		n++
	}
	return n
}
