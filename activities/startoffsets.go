package activities

import (
	"context"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// StartOffsets reads the committed offsets from Postgres and fills every
// partition that has none from Kafka, per useEarliestOffset.
func (a *Activities) StartOffsets(ctx context.Context, in protocol.StartOffsetsInput) (protocol.StartOffsetsResult, error) {
	src := source{topic: in.Topic, pattern: in.TopicPattern}
	parts, earliest, latest, err := a.partitions(ctx, src)
	if err != nil {
		return protocol.StartOffsetsResult{}, classify(err)
	}
	committed, err := a.committed(ctx, in.DataSource, src, parts)
	if err != nil {
		return protocol.StartOffsetsResult{}, err
	}
	next, err := a.Store.NextSequenceIDs(ctx, in.SupervisorID)
	if err != nil {
		return protocol.StartOffsetsResult{}, err
	}
	if in.DropStaging {
		if err := a.dropStaging(ctx, in.SupervisorID); err != nil {
			return protocol.StartOffsetsResult{}, err
		}
	}
	out := domain.Offsets{}
	for _, p := range parts {
		switch {
		case hasOffset(committed, p):
			out[p] = committed[p]
		case in.UseEarliestOffset:
			out[p] = earliest[p]
		default:
			out[p] = latest[p]
		}
	}
	return protocol.StartOffsetsResult{Offsets: out, Committed: committed, NextSequenceIDs: next}, nil
}

func hasOffset(o domain.Offsets, p domain.Partition) bool {
	_, ok := o[p]
	return ok
}
