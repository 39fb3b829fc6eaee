package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/kafka"
	"handoff/workflows"
)

// Offsets out of range, both ways a stored offset leaves its partition:
// the topic deleted and recreated mid-run (its offsets start again lower),
// and records expired before the group read them. Each test counts the
// published event ids against the events that were still readable.

// TestOutOfRangeRecreatedTopicWithoutAutoReset: with
// resetOffsetAutomatically off, a topic deleted and recreated mid-run
// fails the group with OffsetOutOfRange; the supervisor says so and what
// to run, and moves no offset. Running what it says resumes ingestion:
// every event of both topics is then published exactly once.
func TestOutOfRangeRecreatedTopicWithoutAutoReset(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	gen := eventgen.New(s.name, 11)
	const before, after = 3000, 200

	s.produce(gen, before)
	run := s.startSupervisor(spec)
	s.publishAll(spec)
	stored := s.storedOffsets(spec)
	s.recreateTopic(2)
	s.produce(gen, after) // fewer than the stored offsets: they are past the new end

	var st workflows.SupervisorStatus
	require.Eventually(t, func() bool {
		st = s.status(spec)
		return st.DetailedState == workflows.DetailOffsetOutOfRange
	}, 90*time.Second, 250*time.Millisecond, "the supervisor never reported the offset out of range")
	require.Equal(t, workflows.StateUnhealthyTasks, st.State)
	o := st.Groups[0].OutOfRange
	require.NotNil(t, o, "group status: %+v", st.Groups[0])
	require.Equal(t, stored[domain.P(o.Partition)], o.Offset, "the offset wanted is the stored one")
	require.Less(t, o.Latest, o.Offset)
	require.True(t, o.Recreated())
	advice := "starter reset " + spec.ID + " --partition "
	require.True(t, hasError(st, advice) && hasError(st, domain.ErrOffsetOutOfRange), "recent errors must say what to run: %+v", st.RecentErrors)
	require.Empty(t, st.OffsetResets)
	require.Equal(t, stored, s.storedOffsets(spec), "no offset moves by itself")
	require.Len(t, s.publishedIDCounts(spec), before, "only the first topic's events are published")

	// What the status says to run: a forced reset of the partitions.
	var rr workflows.ResetResult
	require.NoError(t, s.update(spec, workflows.UpdateReset, workflows.ResetRequest{All: workflows.ResetEarliest, Force: true}, &rr))
	require.Equal(t, domain.Offsets{domain.P(0): 0, domain.P(1): 0}, rr.Offsets)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, before+after)
}

// TestOutOfRangeRecreatedTopicWithAutoReset: with resetOffsetAutomatically
// and useEarliestOffset on, the group resumes at the recreated topic's
// earliest offset by itself; the status records each partition's reset as
// moving backwards, and every event of both topics is published exactly
// once.
func TestOutOfRangeRecreatedTopicWithAutoReset(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	spec.IOConfig.ResetOffsetAutomatically = true
	gen := eventgen.New(s.name, 12)
	const before, after = 3000, 200

	s.produce(gen, before)
	run := s.startSupervisor(spec)
	s.publishAll(spec)
	stored := s.storedOffsets(spec)
	s.recreateTopic(2)
	s.produce(gen, after)

	var st workflows.SupervisorStatus
	require.Eventually(t, func() bool {
		st = s.status(spec)
		return len(st.OffsetResets) >= 2
	}, 90*time.Second, 250*time.Millisecond, "both partitions must be reset")
	s.waitCaughtUp(spec)
	st = s.status(spec)
	require.Len(t, st.OffsetResets, 2, "one reset per partition, once: %+v", st.OffsetResets)
	require.NotEqual(t, st.OffsetResets[0].Partition, st.OffsetResets[1].Partition)
	for _, r := range st.OffsetResets {
		require.True(t, r.Recreated, "%+v", r)
		require.Equal(t, stored[r.Partition], r.Wanted, "%+v", r)
		require.Equal(t, stored[r.Partition], r.From, "%+v", r)
		require.Zero(t, r.To, "earliest of the new topic: %+v", r)
		require.Zero(t, r.Skipped, "%+v", r)
		require.Contains(t, r.Message, "deleted and recreated")
		require.False(t, r.Time.IsZero())
	}
	require.Nil(t, st.Groups[0].OutOfRange)
	require.NotEqual(t, workflows.DetailOffsetOutOfRange, st.DetailedState)
	s.stopAndWait(spec, run)
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, before+after)
}

// TestOutOfRangeExpiredRecordsWithAutoReset: records expire (a
// delete-records, as retention does) past the stored offset while the
// supervisor is suspended. On resume it resets to the earliest offset
// (useEarliestOffset) and publishes exactly the events still readable, or
// to the latest and publishes nothing more; either way the status records
// the reset and the offsets it skipped.
func TestOutOfRangeExpiredRecordsWithAutoReset(t *testing.T) {
	t.Parallel()
	for _, earliest := range []bool{true, false} {
		name := "latest"
		if earliest {
			name = "earliest"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, 1, activities.Faults{})
			spec := s.spec(1)
			spec.IOConfig.ResetOffsetAutomatically, spec.IOConfig.UseEarliestOffset = true, earliest
			gen := eventgen.New(s.name, 13)
			const before, after, expired = 1000, 1000, 400

			// Started on the empty topic, so that even at latest it reads
			// what comes next.
			run := s.startSupervisor(spec)
			require.Eventually(t, func() bool {
				st := s.status(spec)
				return len(st.Groups) == 1 && st.Groups[0].Running
			}, 30*time.Second, 100*time.Millisecond, "the group did not start")
			s.produce(gen, before)
			s.waitCaughtUp(spec)
			var op workflows.OperationResult
			require.NoError(t, s.update(spec, workflows.UpdateSuspend, nil, &op))
			require.Equal(t, workflows.StateSuspended, op.State)
			published := s.publishedIDCounts(spec)
			stored := s.storedOffsets(spec)
			require.Equal(t, domain.Offsets{domain.P(0): before}, stored)

			s.produce(gen, after)
			s.deleteRecords(0, before+expired)
			readable := s.readableIDs(0)
			require.Len(t, readable, after-expired)
			require.NoError(t, s.update(spec, workflows.UpdateResume, nil, &op))

			var st workflows.SupervisorStatus
			require.Eventually(t, func() bool {
				st = s.status(spec)
				return len(st.OffsetResets) == 1
			}, 60*time.Second, 250*time.Millisecond, "the reset was not recorded")
			r := st.OffsetResets[0]
			to := int64(before + expired)
			if !earliest {
				to = before + after
			}
			require.Equal(t, workflows.OffsetResetRecord{
				Time: r.Time, Group: 0, Partition: domain.P(0), Wanted: before, From: before, To: to, Skipped: to - before,
				DroppedSequences: r.DroppedSequences, Message: r.Message,
			}, r)
			require.Contains(t, r.Message, "expired")
			s.waitCaughtUp(spec)
			s.stopAndWait(spec, run)

			// Published: the events of before, and of the rest exactly the
			// readable ones from the reset on, each once.
			want := map[string]int{}
			for id := range published {
				want[id] = 1
			}
			if earliest {
				for id := range readable {
					want[id] = 1
				}
			}
			got := s.publishedIDCounts(spec)
			require.Len(t, published, before)
			require.Equal(t, len(want), len(got), "published ids")
			require.Equal(t, want, got, "each readable event published exactly once, nothing else")
			require.Equal(t, domain.Offsets{domain.P(0): before + after}, s.storedOffsets(spec))
		})
	}
}

// publishAll waits until the groups read to the end and every event is
// published (the stored offsets are the partitions' ends), checkpointing
// meanwhile.
func (s *stack) publishAll(spec domain.Spec) {
	s.t.Helper()
	s.waitCaughtUp(spec)
	latest := s.latest(spec)
	deadline := time.Now().Add(60 * time.Second)
	for !s.storedOffsets(spec).Equal(latest) {
		require.True(s.t, time.Now().Before(deadline), "not all published within 60s: stored %v, latest %v", s.storedOffsets(spec), latest)
		s.signal(spec, workflows.SignalCheckpoint, workflows.CheckpointSignal{})
		time.Sleep(500 * time.Millisecond)
	}
}

func (s *stack) storedOffsets(spec domain.Spec) domain.Offsets {
	s.t.Helper()
	o, err := s.store.Offsets(context.Background(), spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(s.t, err)
	return o
}

// admin sends one admin request to the broker.
func (s *stack) admin(req kmsg.Request) kmsg.Response {
	s.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...))
	require.NoError(s.t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Request(ctx, req)
	require.NoError(s.t, err)
	return resp
}

// recreateTopic deletes the stack's topic and creates it again, empty,
// with n partitions: its offsets start again at 0.
func (s *stack) recreateTopic(n int32) {
	s.t.Helper()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{s.name}
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(s.name)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 5000
	resp := s.admin(req).(*kmsg.DeleteTopicsResponse)
	for _, t := range resp.Topics {
		require.Zero(s.t, t.ErrorCode, "delete topic %s", s.name)
	}
	require.Eventually(s.t, func() bool {
		return s.broker.CreateTopic(context.Background(), s.name, n) == nil
	}, 10*time.Second, 100*time.Millisecond, "topic %s not created again", s.name)
}

// deleteRecords makes the records of partition p before offset expire,
// as retention does.
func (s *stack) deleteRecords(p int32, before int64) {
	s.t.Helper()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = s.name
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = p, before
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 5000
	resp := s.admin(req).(*kmsg.DeleteRecordsResponse)
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			require.Zero(s.t, rp.ErrorCode, "delete records of %s[%d]", t.Topic, rp.Partition)
			require.Equal(s.t, before, rp.LowWatermark)
		}
	}
}

// readableIDs reads partition p from its earliest offset and returns the
// event ids still in it.
func (s *stack) readableIDs(p int32) map[string]bool {
	s.t.Helper()
	kc, err := kafka.New(s.brokers)
	require.NoError(s.t, err)
	defer kc.Close()
	ctx := context.Background()
	earliest, latest, err := kc.Bounds(ctx, s.name, []int32{p}, kafka.ReadUncommitted)
	require.NoError(s.t, err)
	ids := map[string]bool{}
	for off := earliest[p]; off < latest[p]; {
		res, err := kc.Fetch(ctx, kafka.FetchRequest{Topic: s.name, Partition: p, Offset: off, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
		require.NoError(s.t, err)
		for _, r := range res.Records {
			var ev struct{ ID string }
			if json.Unmarshal(r.Value, &ev) == nil && ev.ID != "" {
				ids[ev.ID] = true
			}
		}
		off = res.Next
	}
	return ids
}

func hasError(st workflows.SupervisorStatus, text string) bool {
	for _, e := range st.RecentErrors {
		if strings.Contains(e.Message, text) {
			return true
		}
	}
	return false
}
