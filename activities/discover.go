package activities

import (
	"context"
	"time"

	"handoff/internal/lagview"
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
		// Current offsets are the metrics' own: this worker's consumes.
		if committed, err := a.Store.Offsets(ctx, in.DataSource, in.Topic); err == nil {
			a.Metrics.Offsets(in.SupervisorID, lagview.Input{Committed: committed, Latest: latest, LatestAt: time.Now()})
		}
	}
	return protocol.DiscoverResult{Partitions: parts, Earliest: earliest, Latest: latest}, nil
}
