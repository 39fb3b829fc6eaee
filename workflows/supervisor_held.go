package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// onHeld takes the partitions a watch saw held by open transactions, and
// records each hold that is new in the recent errors: a transaction left
// hanging upstream stalls its partitions, and must be seen.
func (s *supervisor) onHeld(ctx workflow.Context, held []domain.HeldPartition) {
	w := s.c.Watched
	for _, h := range held {
		known := slices.ContainsFunc(w.Held, func(k domain.HeldPartition) bool {
			return k.Partition == h.Partition && k.Offset == h.Offset
		})
		if !known {
			s.recordError(ctx, fmt.Sprintf("held by an open transaction: %s (see docs/OPERATIONS.md, Held by an open transaction)", h))
		}
	}
	w.Held = slices.Clone(held)
}
