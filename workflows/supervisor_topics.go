package workflows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// A supervisor with ioConfig.topicPattern reads every topic whose name
// matches. Its partitions carry their topic; they are assigned to groups by
// domain.GroupOf, which depends only on the partition and taskCount, so a
// topic that joins or leaves never moves another's partitions.
//
// A topic that starts matching is found by the next look (the watch, every
// period): its partitions join their groups as new partitions of one topic
// do (addPartitions), read from the committed offsets or, for a topic never
// published, from its earliest or latest offset (useEarliestOffset).
//
// A topic that is deleted leaves the look. Kafka never shrinks a topic, so
// partitions gone mean their topic is gone: the supervisor records it in
// status (deletedTopics, its committed offsets kept in Postgres and shown),
// stops handing its partitions out, and drains the groups as for a spec
// change, so that what was read of the topic before it went is published
// under the sequences that read it, and the groups are laid out again
// without it. Until the drain, fetches of the gone topic read nothing.
// A single-topic supervisor never drops partitions: a topic gone is a
// TOPIC_NOT_FOUND problem, as before.

// maxDeletedTopics bounds the status's list of deleted topics.
const maxDeletedTopics = 20

// DeletedTopic is a topic the supervisor read that was deleted.
type DeletedTopic struct {
	Topic string    `json:"topic"`
	Seen  time.Time `json:"seen"` // when the supervisor found it gone
	// Committed is where its partitions' published data ends, as stored
	// (kept: a topic created again under the name starts from them, and
	// resetOffsetAutomatically or `starter reset` moves them).
	Committed domain.Offsets `json:"committed,omitempty"`
}

// sourceTopic and sourcePattern are what the supervisor's activities look
// at: the spec's topic, or its pattern.
func (s *supervisor) sourceTopic() string   { return s.spec.IOConfig.Topic }
func (s *supervisor) sourcePattern() string { return s.spec.IOConfig.TopicPattern }

// dropGoneTopics handles the partitions of known that partitions lacks,
// for a topicPattern supervisor (a single-topic one keeps them all).
func (s *supervisor) dropGoneTopics(ctx workflow.Context, partitions []domain.Partition) {
	if !s.spec.IOConfig.MultiTopic() {
		return
	}
	var gone []domain.Partition
	for _, p := range s.c.Partitions {
		if !slices.Contains(partitions, p) {
			gone = append(gone, p)
		}
	}
	if len(gone) == 0 {
		return
	}
	goneSet := domain.Offsets{}
	for _, p := range gone {
		goneSet[p] = 0
	}
	topics := goneSet.Topics()
	for _, t := range topics {
		committed := s.c.Committed.OfTopic(t)
		s.c.DeletedTopics = append(s.c.DeletedTopics, DeletedTopic{Topic: t, Seen: now(ctx), Committed: committed})
	}
	if n := len(s.c.DeletedTopics); n > maxDeletedTopics {
		s.c.DeletedTopics = s.c.DeletedTopics[n-maxDeletedTopics:]
	}
	keep := func(p domain.Partition) bool { _, g := goneSet[p]; return !g }
	s.c.Partitions = slices.DeleteFunc(s.c.Partitions, func(p domain.Partition) bool { return !keep(p) })
	for _, rec := range s.c.Groups {
		rec.Partitions = slices.DeleteFunc(rec.Partitions, func(p domain.Partition) bool { return !keep(p) })
	}
	if s.c.PendingSpec == nil && s.c.Target == targetRun {
		spec := s.spec
		s.c.PendingSpec = &spec // drain, publish, lay out again without them
	}
	s.recordError(ctx, fmt.Sprintf("topic(s) %s deleted: their committed offsets are kept; the groups publish what they read of them and are laid out again without them",
		strings.Join(topics, ", ")))
}

// topicBack forgets a deleted topic that matches again (created anew).
func (s *supervisor) topicBack(added []domain.Partition) {
	s.c.DeletedTopics = slices.DeleteFunc(s.c.DeletedTopics, func(d DeletedTopic) bool {
		return slices.ContainsFunc(added, func(p domain.Partition) bool { return p.Topic == d.Topic })
	})
}

// topics lists the topics the supervisor reads now.
func (s *supervisor) topics() []string {
	var out []string
	for _, p := range s.c.Partitions {
		if p.Topic != "" && !slices.Contains(out, p.Topic) {
			out = append(out, p.Topic)
		}
	}
	return out
}

// TopicsLine says which topics a topicPattern supervisor reads and which
// were deleted, "" for a single-topic one.
func TopicsLine(st SupervisorStatus) string {
	if len(st.Topics) == 0 && len(st.DeletedTopics) == 0 {
		return ""
	}
	line := fmt.Sprintf("topics (%d): %s", len(st.Topics), strings.Join(st.Topics, ", "))
	if len(st.DeletedTopics) > 0 {
		gone := make([]string, len(st.DeletedTopics))
		for i, d := range st.DeletedTopics {
			gone[i] = fmt.Sprintf("%s (at %s, committed %s kept)", d.Topic, d.Seen.UTC().Format(time.RFC3339), d.Committed)
		}
		line += " · deleted: " + strings.Join(gone, ", ")
	}
	return line
}
