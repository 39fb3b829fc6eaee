package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/protocol"
)

// goneTopic reports whether a fetch failed because a topicPattern's topic
// was deleted. The partition then has nothing more to read: its fetcher
// waits, reading nothing, until the read ends (ctx), and the supervisor,
// which finds the topic gone at its next look, drains and lays out the
// groups without it (workflows/supervisor_topics.go). A single topic gone
// stays an error (TopicNotFound), as before.
func goneTopic(ctx context.Context, io domain.IOConfig, err error) bool {
	if !io.MultiTopic() || !errors.Is(err, kafka.ErrTopicNotFound) {
		return false
	}
	<-ctx.Done()
	return true
}

// outOfRange turns a fetch of partition p at offset that Kafka refused as
// out of range into a non-retryable OffsetOutOfRange application error
// whose details are a domain.OutOfRange (the partition's current bounds
// included); any other error passes through unchanged.
//
// The consume activity never skips offsets itself, with or without
// ioConfig.resetOffsetAutomatically. A skip inside a chunk would be safe for
// records that expired (the sequence's [start, end) simply spans them), but
// not for a recreated topic, whose offsets go backwards: a sequence cannot
// end before it starts, and the stored offsets must move back. So, as in
// Druid, the group fails and the supervisor decides: with the setting on it
// resets the partition's stored offset (under the publish lock, through the
// same ResetOffsets activity as `starter reset`), drops the group's
// unpublished sequences and restarts the group from the stored offsets;
// off, it records the error and what to run. Either way the stored offsets
// only change by a publish's compare-and-swap or by that reset.
func (a *Activities) outOfRange(ctx context.Context, in protocol.ConsumeInput, p domain.Partition, offset int64, err error) error {
	if goneTopic(ctx, in.Spec.IOConfig, err) {
		return nil
	}
	if !errors.Is(err, kafka.ErrOffsetOutOfRange) {
		return err
	}
	topic := in.Spec.IOConfig.TopicOf(p)
	earliest, latest, berr := a.Kafka.Bounds(ctx, topic, []int32{p.Partition}, kafka.ReadUncommitted)
	if berr != nil {
		// Retried: the next attempt fetches again and, if still out of
		// range, looks the bounds up again.
		return fmt.Errorf("%w; and the partition's bounds could not be read: %w", err, classify(berr))
	}
	o := domain.OutOfRange{
		SupervisorID: in.Spec.ID, Topic: topic, Partition: p.Partition, Offset: offset,
		Earliest: earliest[p.Partition], Latest: latest[p.Partition],
		AutoReset: in.Spec.IOConfig.ResetOffsetAutomatically, UseEarliest: in.Spec.IOConfig.UseEarliestOffset,
	}
	// An offset the partition holds again by now was refused for being past
	// its end: the topic was recreated and has grown since. o.Recreated()
	// says so; reading on from it would silently skip the new topic's
	// first offsets, so it is reported like any other.
	return temporal.NewNonRetryableApplicationError(o.Error(), domain.ErrOffsetOutOfRange, err, o)
}
