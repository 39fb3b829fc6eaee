package activities

import (
	"context"
	"handoff/internal/protocol"
)

// Discover lists a topic's partitions with their earliest and latest
// offsets. A missing topic is a TopicNotFound error.
func (a *Activities) Discover(ctx context.Context, in protocol.DiscoverInput) (protocol.DiscoverResult, error) {
	parts, err := a.Kafka.Partitions(ctx, in.Topic)
	if err != nil {
		return protocol.DiscoverResult{}, classify(err)
	}
	earliest, latest, err := a.Kafka.Bounds(ctx, in.Topic, parts)
	if err != nil {
		return protocol.DiscoverResult{}, classify(err)
	}
	if a.Metrics != nil && in.DataSource != "" {
		if committed, err := a.Store.Offsets(ctx, in.DataSource, in.Topic); err == nil {
			lag := map[int32]int64{}
			for _, p := range parts {
				if c, ok := committed[p]; ok {
					lag[p] = max(latest[p]-c, 0)
				}
			}
			a.Metrics.Lag(in.SupervisorID, lag)
		}
	}
	return protocol.DiscoverResult{Partitions: parts, Earliest: earliest, Latest: latest}, nil
}
