package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// ResetOffsets moves the datasource's stored offsets of the target
// partitions to where the targets say, checked against the partitions'
// current bounds in Kafka, and returns the offsets it stored. Either all
// targets are valid and stored, or none is.
func (a *Activities) ResetOffsets(ctx context.Context, in protocol.ResetOffsetsInput) (protocol.ResetOffsetsResult, error) {
	if len(in.Targets) == 0 {
		return protocol.ResetOffsetsResult{}, invalidReset(errors.New("no partitions to reset"))
	}
	src := source{topic: in.Topic, pattern: in.TopicPattern}
	_, earliest, latest, err := a.partitions(ctx, src)
	if err != nil {
		return protocol.ResetOffsetsResult{}, classify(err)
	}
	offsets, err := resolveTargets(src.io(), in.Targets, earliest, latest)
	if err != nil {
		return protocol.ResetOffsetsResult{}, invalidReset(err)
	}
	if err := a.Store.ResetOffsets(ctx, in.DataSource, in.Topic, offsets); err != nil {
		return protocol.ResetOffsetsResult{}, err
	}
	return protocol.ResetOffsetsResult{Offsets: offsets}, nil
}

func invalidReset(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrInvalidReset, nil)
}

// resolveTargets turns every target into an offset within [earliest,
// latest] of its partition, or names every target that is not.
func resolveTargets(io domain.IOConfig, targets map[domain.Partition]string, earliest, latest domain.Offsets) (domain.Offsets, error) {
	out := domain.Offsets{}
	var problems []string
	for _, p := range slices.SortedFunc(maps.Keys(targets), domain.ComparePartitions) {
		off, err := resolveTarget(targets[p], p, earliest, latest)
		if err != nil {
			problems = append(problems, fmt.Sprintf("topic %q partition %d: %v", io.TopicOf(p), p.Partition, err))
			continue
		}
		out[p] = off
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return out, nil
}

func resolveTarget(target string, p domain.Partition, earliest, latest domain.Offsets) (int64, error) {
	lo, known := earliest[p]
	hi := latest[p]
	if !known {
		return 0, fmt.Errorf("no such partition (the topic has %d)", len(latest))
	}
	switch t := strings.ToLower(strings.TrimSpace(target)); t {
	case "earliest":
		return lo, nil
	case "latest":
		return hi, nil
	default:
		off, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("target %q is not \"earliest\", \"latest\" or an offset", target)
		}
		if off < lo || off > hi {
			return 0, fmt.Errorf("offset %d is outside the valid range [%d, %d]", off, lo, hi)
		}
		return off, nil
	}
}
