package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// A group stops reading once maxPendingPublishes closed sequences wait to
// publish, and reads on when one commits (the bounded commit queue).
func TestTaskGroupStopsReadingWhenPublishesPileUp(t *testing.T) {
	for _, pending := range []int{1, 2, 3} {
		spec := testSpec()
		spec.TuningConfig.MaxRowsPerSegment = 10 // every chunk closes its sequence
		spec.TuningConfig.MaxPendingPublishes = pending
		h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000}, 10)
		// Publishing is slow: a minute each.
		h.env.OnActivity(protocol.ActivityPublish, mock.Anything, mock.Anything).Return(h.topic.publish).After(time.Minute)
		var readBeforeFirstCommit, publishedBy50s int
		h.at(50*time.Second, func() {
			readBeforeFirstCommit, publishedBy50s = h.rec.count("consume"), h.rec.count("publish")
		})
		h.signal(70*time.Second, SignalGroupStop, nil)
		h.run(groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: domain.Offsets{domain.P(0): 0}}))

		require.Zero(t, publishedBy50s, "pending=%d: no publish has committed by 50s", pending)
		require.Equal(t, pending, readBeforeFirstCommit, "pending=%d: one chunk per sequence, then the queue is full", pending)
		require.Greater(t, h.rec.count("consume"), pending, "pending=%d: reading goes on once a publish commits", pending)
	}
}
