package activities

import (
	"context"

	"handoff/internal/domain"
)

// source is what a supervisor reads: one topic, or every topic whose name
// matches a pattern (kafka.Client.Look lists its partitions).
type source struct {
	topic, pattern string
}

func (s source) io() domain.IOConfig { return domain.IOConfig{Topic: s.topic, TopicPattern: s.pattern} }

// partitions lists the source's partitions with their earliest and latest
// offsets.
func (a *Activities) partitions(ctx context.Context, src source) (parts []domain.Partition, earliest, latest domain.Offsets, err error) {
	return a.Kafka.Look(ctx, src.io())
}

// committed is the source's stored offsets: of its topic, or of the
// pattern's topics among parts.
func (a *Activities) committed(ctx context.Context, dataSource string, src source, parts []domain.Partition) (domain.Offsets, error) {
	if src.pattern == "" {
		return a.Store.Offsets(ctx, dataSource, src.topic)
	}
	topics := domain.Offsets{}
	for _, p := range parts {
		topics[p] = 0
	}
	return a.Store.TopicsOffsets(ctx, dataSource, topics.Topics())
}
