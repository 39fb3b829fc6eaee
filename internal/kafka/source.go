package kafka

import (
	"context"
	"errors"
	"fmt"

	"handoff/internal/domain"
)

// Look lists the partitions a supervisor reads (io's topic, or every
// topic its topicPattern matches), in order, with their earliest and latest
// offsets, latest as the spec's isolation level sees it (Bounds). Partitions of one topic are named by number alone (domain.P); a
// pattern's carry their topic (domain.TP). A single topic that does not
// exist, and a pattern no topic matches, are ErrTopicNotFound errors; a
// matching topic deleted between the listing and its offsets is left out.
func (c *Client) Look(ctx context.Context, io domain.IOConfig) (parts []domain.Partition, earliest, latest domain.Offsets, err error) {
	if !io.MultiTopic() {
		nums, err := c.Partitions(ctx, io.Topic)
		if err != nil {
			return nil, nil, nil, err
		}
		e, l, err := c.Bounds(ctx, io.Topic, nums, IsolationOf(io))
		if err != nil {
			return nil, nil, nil, err
		}
		return toPartitions("", nums), toOffsets("", e), toOffsets("", l), nil
	}
	all, err := c.Topics(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	earliest, latest = domain.Offsets{}, domain.Offsets{}
	for _, name := range io.MatchingTopics(names) {
		e, l, err := c.Bounds(ctx, name, all[name], IsolationOf(io))
		if errors.Is(err, ErrTopicNotFound) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, nil, nil, err
		}
		parts = append(parts, toPartitions(name, all[name])...)
		addOffsets(earliest, name, e)
		addOffsets(latest, name, l)
	}
	if len(parts) == 0 {
		return nil, nil, nil, fmt.Errorf("no topic on %s matches topicPattern %q (of %d topics): %w", c.where(), io.TopicPattern, len(all), ErrTopicNotFound)
	}
	return parts, earliest, latest, nil
}

func toPartitions(topic string, nums []int32) []domain.Partition {
	out := make([]domain.Partition, len(nums))
	for i, n := range nums {
		out[i] = domain.TP(topic, n)
	}
	return out
}

func toOffsets(topic string, m map[int32]int64) domain.Offsets {
	out := make(domain.Offsets, len(m))
	addOffsets(out, topic, m)
	return out
}

func addOffsets(into domain.Offsets, topic string, m map[int32]int64) {
	for n, o := range m {
		into[domain.TP(topic, n)] = o
	}
}
