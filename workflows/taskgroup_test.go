package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

func groupInput(spec domain.Spec, partitions []domain.Partition, seqs ...domain.Sequence) TaskGroupInput {
	return TaskGroupInput{Spec: spec, Group: 0, Generation: 1, Partitions: partitions, Sequences: seqs}
}

// A user checkpoint closes the open sequence where the group has read to:
// one request at that position, then one publish of exactly that sequence
// with all its staging keys in order, then sequence-published.
func TestTaskGroupUserCheckpointPublishesSequence(t *testing.T) {
	spec := testSpec()
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000, domain.P(1): 1000}, 10)
	start := domain.Offsets{domain.P(0): 5, domain.P(1): 7}
	s1 := domain.SequenceName(spec.ID, 0, 1)

	h.signal(3500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
	h.signal(20500*time.Millisecond, SignalGroupStop, nil)
	h.run(groupInput(spec, []domain.Partition{domain.P(0), domain.P(1)}, domain.Sequence{ID: 1, Start: start}))

	evs := h.rec.all()
	reqs := h.rec.requests()
	var user []CheckpointRequest
	for _, r := range reqs {
		if r.Reason == ReasonUser {
			user = append(user, r)
		}
	}
	require.Len(t, user, 1, "exactly one checkpoint-request for the user checkpoint; all: %+v", reqs)
	req := reqs[0]
	require.Equal(t, ReasonUser, req.Reason, "the first request answers the user checkpoint")
	require.Equal(t, 0, req.Group)
	require.Equal(t, 1, req.Generation)
	require.Equal(t, 1, req.SequenceID)

	reqIdx := h.rec.index(0, isSignal(SignalCheckpointRequest))
	pos := positionAfter(evs, reqIdx, start)
	require.Equal(t, pos, req.Offsets, "request offsets are the position read")
	require.False(t, pos.Equal(start), "some chunks were read before the checkpoint")
	require.Equal(t, -1, h.rec.index(reqIdx, func(e event) bool { return isConsume(e) && e.consume.SequenceName == s1 }),
		"nothing is read into the sequence after its request")

	pubs := h.rec.publishes()
	require.NotEmpty(t, pubs)
	keys := keysOf(evs, s1)
	require.NotEmpty(t, keys)
	require.Equal(t, protocol.PublishInput{
		Spec: spec, Group: 0, SequenceID: 1, Start: start, End: req.Offsets, StagingKeys: keys,
	}, pubs[0])
	for _, p := range pubs[1:] {
		require.NotEqual(t, 1, p.SequenceID, "sequence 1 is published once")
	}
	pubIdx := h.rec.index(0, func(e event) bool { return e.kind == "publish" })
	require.Greater(t, pubIdx, reqIdx, "publish after the request was answered")

	donePub := h.rec.published()
	require.NotEmpty(t, donePub)
	require.Equal(t, SequencePublished{Group: 0, Generation: 1, SequenceID: 1, End: req.Offsets, Segments: 1, Rows: req.Offsets.Sum() - start.Sum()}, donePub[0])
	require.Greater(t, h.rec.index(0, isSignal(SignalSequencePublished)), pubIdx, "sequence-published after the publish")

	// The next sequence starts where sequence 1 ended.
	require.Len(t, pubs, 2, "the stop publishes sequence 2")
	require.Equal(t, 2, pubs[1].SequenceID)
	require.Equal(t, req.Offsets, pubs[1].Start)
}

// A checkpoint on an idle topic (Consume makes no progress) has nothing to
// close: no request, no publish, and the group goes on reading.
func TestTaskGroupCheckpointOnIdleTopicSendsNothing(t *testing.T) {
	spec := testSpec()
	start := domain.Offsets{domain.P(0): 5, domain.P(1): 7}
	h := newGroupHarness(t, spec, start.Clone(), 10) // nothing past start

	var atCheckpoint, atStop int
	h.signal(2500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
	h.at(2600*time.Millisecond, func() { atCheckpoint = h.rec.count("consume") })
	h.signal(4500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{})
	h.at(10400*time.Millisecond, func() { atStop = h.rec.count("consume") })
	h.signal(10500*time.Millisecond, SignalGroupStop, nil)
	h.run(groupInput(spec, []domain.Partition{domain.P(0), domain.P(1)}, domain.Sequence{ID: 1, Start: start}))

	require.Empty(t, h.rec.requests(), "no checkpoint-request for an empty sequence")
	require.Empty(t, h.rec.publishes(), "no publish for an empty sequence")
	require.Empty(t, h.rec.published())
	require.Greater(t, atStop, atCheckpoint, "the group keeps reading after a no-op checkpoint")
	require.LessOrEqual(t, h.rec.count("consume"), 12, "one read per chunk period, no spinning")
	finished := h.rec.filter(isSignal(SignalGroupFinished))
	require.Len(t, finished, 1)
	require.Equal(t, GroupFinished{Group: 0, Generation: 1}, finished[0].arg)
}

// A stop while a Consume is in flight: once it returns, one request with
// reason stop at the position read, no more reads, the publish, then
// sequence-published and group-finished, and the workflow completes.
func TestTaskGroupStopWhileConsuming(t *testing.T) {
	spec := testSpec()
	start := domain.Offsets{domain.P(0): 0}
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000}, 10)
	s1 := domain.SequenceName(spec.ID, 0, 1)

	h.signal(3500*time.Millisecond, SignalGroupStop, nil) // the 4th chunk is in flight
	h.run(groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: start}))

	evs := h.rec.all()
	reqs := h.rec.requests()
	require.Len(t, reqs, 1)
	reqIdx := h.rec.index(0, isSignal(SignalCheckpointRequest))
	require.Equal(t, CheckpointRequest{Group: 0, Generation: 1, SequenceID: 1, Offsets: positionAfter(evs, reqIdx, start), Reason: ReasonStop}, reqs[0])
	require.Equal(t, domain.Offsets{domain.P(0): 40}, reqs[0].Offsets, "the in-flight chunk counts")
	require.Equal(t, -1, h.rec.index(reqIdx, isConsume), "no Consume after the stop's request")

	require.Equal(t, []protocol.PublishInput{{
		Spec: spec, Group: 0, SequenceID: 1, Start: start, End: reqs[0].Offsets, StagingKeys: keysOf(evs, s1),
	}}, h.rec.publishes())
	require.Len(t, keysOf(evs, s1), 4)

	pubIdx := h.rec.index(0, func(e event) bool { return e.kind == "publish" })
	donePubIdx := h.rec.index(0, isSignal(SignalSequencePublished))
	finIdx := h.rec.index(0, isSignal(SignalGroupFinished))
	require.True(t, reqIdx < pubIdx && pubIdx < donePubIdx && donePubIdx < finIdx,
		"request < publish < sequence-published < group-finished: %d %d %d %d", reqIdx, pubIdx, donePubIdx, finIdx)
	require.Equal(t, len(evs)-1, finIdx, "group-finished is the last thing the group does")
	require.Equal(t, GroupFinished{Group: 0, Generation: 1}, evs[finIdx].arg)
	require.Equal(t, 1, evs[donePubIdx].arg.(SequencePublished).SequenceID)
}

// maxRowsPerSegment closes a sequence with no outside signal, at the first
// chunk that reaches the limit, and keeps doing so.
func TestTaskGroupMaxRowsClosesSequence(t *testing.T) {
	spec := testSpec()
	spec.TuningConfig.MaxRowsPerSegment = 25
	start := domain.Offsets{domain.P(0): 0}
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000}, 10)

	h.signal(10500*time.Millisecond, SignalGroupStop, nil)
	h.run(groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: start}))

	reqs := h.rec.requests()
	require.GreaterOrEqual(t, len(reqs), 3, "requests: %+v", reqs)
	for i, want := range []int64{30, 60, 90} {
		require.Equal(t, CheckpointRequest{
			Group: 0, Generation: 1, SequenceID: i + 1, Offsets: domain.Offsets{domain.P(0): want}, Reason: ReasonMaxRows,
		}, reqs[i])
	}
	pubs := h.rec.publishes()
	require.GreaterOrEqual(t, len(pubs), 3)
	evs := h.rec.all()
	require.Equal(t, protocol.PublishInput{
		Spec: spec, Group: 0, SequenceID: 1, Start: start, End: domain.Offsets{domain.P(0): 30},
		StagingKeys: keysOf(evs, domain.SequenceName(spec.ID, 0, 1)),
	}, pubs[0])
	require.Len(t, pubs[0].StagingKeys, 3)
	require.Equal(t, domain.Offsets{domain.P(0): 30}, pubs[1].Start)
	require.Equal(t, domain.Offsets{domain.P(0): 60}, pubs[1].End)
}

// A restored closed sequence is read again exactly to its End (Consume's
// Until is End) and published before anything else; the open sequence then
// goes on from End.
func TestTaskGroupRestoredClosedSequenceRereadAndPublishedFirst(t *testing.T) {
	spec := testSpec()
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000, domain.P(1): 1000}, 10)
	s3 := domain.Sequence{ID: 3, Start: domain.Offsets{domain.P(0): 10, domain.P(1): 20}, End: domain.Offsets{domain.P(0): 45, domain.P(1): 50}}
	s4 := domain.Sequence{ID: 4, Start: s3.End.Clone()}
	name3 := domain.SequenceName(spec.ID, 0, 3)
	name4 := domain.SequenceName(spec.ID, 0, 4)

	h.signal(10500*time.Millisecond, SignalGroupStop, nil)
	h.run(groupInput(spec, []domain.Partition{domain.P(0), domain.P(1)}, s3, s4))

	evs := h.rec.all()
	consumes := h.rec.consumes()
	require.NotEmpty(t, consumes)
	var reread []event
	for _, e := range consumes {
		if e.consume.SequenceName == name3 {
			reread = append(reread, e)
		}
	}
	require.NotEmpty(t, reread)
	require.Equal(t, reread, consumes[:len(reread)], "the closed sequence is read first")
	require.Equal(t, s3.Start, reread[0].consume.From)
	pos := s3.Start.Clone()
	for _, e := range reread {
		require.Equal(t, s3.End, e.consume.Until, "re-read bounded by End")
		require.Equal(t, pos, e.consume.From, "re-read is contiguous")
		pos = e.consumed.To
	}
	require.Equal(t, s3.End, pos, "re-read reaches End exactly")

	pubs := h.rec.publishes()
	require.NotEmpty(t, pubs)
	require.Equal(t, protocol.PublishInput{
		Spec: spec, Group: 0, SequenceID: 3, Start: s3.Start, End: s3.End, StagingKeys: keysOf(evs, name3),
	}, pubs[0])
	pubIdx := h.rec.index(0, func(e event) bool { return e.kind == "publish" })
	if i := h.rec.index(0, isSignal(SignalCheckpointRequest)); i >= 0 {
		require.Greater(t, i, pubIdx, "no checkpoint-request before sequence 3 is published")
	}
	if i := h.rec.index(0, func(e event) bool { return isConsume(e) && e.consume.SequenceName != name3 }); i >= 0 {
		require.Greater(t, i, pubIdx, "sequence 3 is published before reading on")
	}
	donePub := h.rec.published()
	require.NotEmpty(t, donePub)
	require.Equal(t, 3, donePub[0].SequenceID)

	// The open sequence continues exactly at End.
	first4 := h.rec.index(0, func(e event) bool { return isConsume(e) && e.consume.SequenceName == name4 })
	require.GreaterOrEqual(t, first4, 0)
	require.Equal(t, s3.End, evs[first4].consume.From)
	require.Nil(t, evs[first4].consume.Until)
	require.Len(t, pubs, 2)
	require.Equal(t, 4, pubs[1].SequenceID)
	require.Equal(t, s3.End, pubs[1].Start)
}

// An unanswered request is sent again, with the same offsets, after
// requestResendAfter; when both answers then arrive, the second one (for a
// sequence already closed) is ignored: one publish, and the next sequence
// starts where the first ended.
func TestTaskGroupResendsUnansweredRequestAndIgnoresRepeatAnswer(t *testing.T) {
	spec := testSpec()
	start := domain.Offsets{domain.P(0): 0}
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000}, 10)
	h.answer = func(req CheckpointRequest, n int) []SetEndOffsets {
		switch n {
		case 1:
			return nil // lost
		case 2:
			return []SetEndOffsets{answerAt(req), answerAt(req)} // the late answer and the resend's
		}
		return []SetEndOffsets{answerAt(req)}
	}

	h.signal(2500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{})
	h.signal(requestResendAfter+10*time.Second, SignalGroupStop, nil)
	h.run(groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: start}))

	reqs := h.rec.requests()
	require.GreaterOrEqual(t, len(reqs), 2)
	require.Equal(t, CheckpointRequest{Group: 0, Generation: 1, SequenceID: 1, Offsets: domain.Offsets{domain.P(0): 30}, Reason: ReasonUser}, reqs[0])
	require.Equal(t, reqs[0], reqs[1], "the resend repeats the request")
	pubs := h.rec.publishes()
	require.Len(t, pubs, 2, "sequence 1, then sequence 2 at the stop: %+v", pubs)
	require.Equal(t, 1, pubs[0].SequenceID)
	require.Equal(t, domain.Offsets{domain.P(0): 30}, pubs[0].End)
	require.Equal(t, 2, pubs[1].SequenceID)
	require.Equal(t, domain.Offsets{domain.P(0): 30}, pubs[1].Start)
	require.True(t, pubs[1].End[domain.P(0)] > 30, "sequence 2 holds what was read after the answer")
}
