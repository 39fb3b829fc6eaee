package lagview

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"handoff/internal/domain"
)

// The case of issue 13: latest offsets read at the supervisor's last
// period, current ones reported since, so current is past latest. The view
// never shows a consumer ahead of the log's end: latest is raised to
// current and marked; lag is latest − current, unpublished current −
// committed.
func TestComputeRaisesLatestBelowCurrent(t *testing.T) {
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	v := Compute(Input{
		Committed: domain.Offsets{domain.P(0): 6102, domain.P(1): 100},
		Current:   domain.Offsets{domain.P(0): 7649, domain.P(1): 150},
		Latest:    domain.Offsets{domain.P(0): 7542, domain.P(1): 180},
		LatestAt:  at,
	})
	assert.Equal(t, View{
		Partitions: []Partition{
			{Partition: domain.P(0), Committed: 6102, Current: 7649, Latest: 7649, LatestRaised: true, Lag: 0, Unpublished: 1547},
			{Partition: domain.P(1), Committed: 100, Current: 150, Latest: 180, Lag: 30, Unpublished: 50},
		},
		Lag: 30, Unpublished: 1597, LatestAt: at,
	}, v)
	assert.Equal(t, []domain.Partition{domain.P(0)}, v.Raised())
	assert.Equal(t, map[domain.Partition]int64{domain.P(0): 0, domain.P(1): 30}, v.Lags())
	assert.Equal(t, map[domain.Partition]int64{domain.P(0): 1547, domain.P(1): 50}, v.UnpublishedByPartition())
	assert.Equal(t, domain.Offsets{domain.P(0): 7649, domain.P(1): 180}, v.Latest())
	assert.Equal(t, domain.Offsets{domain.P(0): 7649, domain.P(1): 150}, v.Current())
}

// A partition nothing was read from yet is at its committed offset; a
// current below committed (reported before the last publish) is taken as
// committed; a partition without latest, or with neither committed nor
// current, is left out.
func TestComputeFillsAndLeavesOut(t *testing.T) {
	v := Compute(Input{
		Committed: domain.Offsets{domain.P(0): 100, domain.P(1): 200, domain.P(4): 7},
		Current:   domain.Offsets{domain.P(1): 150, domain.P(2): 30},
		Latest:    domain.Offsets{domain.P(0): 120, domain.P(1): 260, domain.P(2): 40, domain.P(3): 9},
	})
	assert.Equal(t, []Partition{
		{Partition: domain.P(0), Committed: 100, Current: 100, Latest: 120, Lag: 20},
		{Partition: domain.P(1), Committed: 200, Current: 200, Latest: 260, Lag: 60},
		{Partition: domain.P(2), Committed: 30, Current: 30, Latest: 40, Lag: 10},
	}, v.Partitions)
	assert.Equal(t, int64(90), v.Lag)
	assert.Zero(t, v.Unpublished)
	assert.Empty(t, v.Raised())
}

func TestBaseTakesCommittedElseTheFirstSequenceStart(t *testing.T) {
	got := Base(domain.Offsets{domain.P(0): 150},
		domain.Offsets{domain.P(0): 100},                  // sequence 7
		domain.Offsets{domain.P(0): 150, domain.P(1): 5},  // sequence 8: partition 1 joined
		domain.Offsets{domain.P(0): 180, domain.P(1): 10}, // later
	)
	assert.Equal(t, domain.Offsets{domain.P(0): 150, domain.P(1): 5}, got)
	assert.Equal(t, domain.Offsets{}, Base(nil))
}

func TestFurthest(t *testing.T) {
	assert.Nil(t, Furthest(nil, domain.Offsets{}))
	assert.Equal(t, domain.Offsets{domain.P(0): 12, domain.P(1): 40, domain.P(2): 3},
		Furthest(domain.Offsets{domain.P(0): 10, domain.P(1): 40}, nil, domain.Offsets{domain.P(0): 12, domain.P(1): 35, domain.P(2): 3}))
}

func TestOverlay(t *testing.T) {
	assert.Nil(t, Overlay(nil, domain.Offsets{domain.P(0): 1}))
	assert.Equal(t, domain.Offsets{domain.P(0): 12, domain.P(1): 5}, Overlay(domain.Offsets{domain.P(0): 10, domain.P(1): 5}, domain.Offsets{domain.P(0): 12, domain.P(2): 7}))
}
