package activities

import (
	"context"
	"time"

	"handoff/internal/lagview"
	"handoff/internal/protocol"
)

// Discover lists the partitions of a topic (or of every topic a pattern
// matches) with their earliest and latest offsets. A missing topic is a
// TopicNotFound error.
func (a *Activities) Discover(ctx context.Context, in protocol.DiscoverInput) (protocol.DiscoverResult, error) {
	src := source{topic: in.Topic, pattern: in.TopicPattern}
	parts, earliest, latest, err := a.partitions(ctx, src)
	if err != nil {
		return protocol.DiscoverResult{}, classify(err)
	}
	if a.Metrics != nil && in.DataSource != "" {
		// Current offsets are the metrics' own: this worker's consumes.
		if committed, err := a.committed(ctx, in.DataSource, src, parts); err == nil {
			a.Metrics.Offsets(in.SupervisorID, lagview.Input{Committed: committed, Latest: latest, LatestAt: time.Now()})
		}
	}
	return protocol.DiscoverResult{Partitions: parts, Earliest: earliest, Latest: latest}, nil
}
