package activities

import (
	"context"
	"handoff/internal/protocol"

	"handoff/internal/domain"
)

// StartOffsets reads the committed offsets from Postgres and fills every
// partition that has none from Kafka, per useEarliestOffset.
func (a *Activities) StartOffsets(ctx context.Context, in protocol.StartOffsetsInput) (protocol.StartOffsetsResult, error) {
	committed, err := a.Store.Offsets(ctx, in.DataSource, in.Topic)
	if err != nil {
		return protocol.StartOffsetsResult{}, err
	}
	parts, err := a.Kafka.Partitions(ctx, in.Topic)
	if err != nil {
		return protocol.StartOffsetsResult{}, classify(err)
	}
	earliest, latest, err := a.Kafka.Bounds(ctx, in.Topic, parts)
	if err != nil {
		return protocol.StartOffsetsResult{}, classify(err)
	}
	next, err := a.Store.NextSequenceIDs(ctx, in.SupervisorID)
	if err != nil {
		return protocol.StartOffsetsResult{}, err
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

func hasOffset(o domain.Offsets, p int32) bool {
	_, ok := o[p]
	return ok
}
