package activities

import (
	"slices"
	"time"

	"handoff/internal/domain"
)

// DefaultHeldReportAfter is how long an open transaction must hold a
// partition before the supervisor's status and details show it: a
// transaction of a healthy producer (Kafka Streams commits every 100 ms
// under exactly-once) never does, one open as long as the producers'
// default transaction timeout (60 s) is well shown, and the watch returns
// (history) only for holds that last.
const DefaultHeldReportAfter = 30 * time.Second

// lastingHolds keeps the holds at least after old at now: only those reach
// the supervisor.
func lastingHolds(held []domain.HeldPartition, now time.Time, after time.Duration) []domain.HeldPartition {
	var out []domain.HeldPartition
	for _, h := range held {
		if now.Sub(h.Since) >= after {
			out = append(out, h)
		}
	}
	return out
}

// sameHolds: the same partitions held at the same offsets (how far the log
// went on behind a hold, and since when a stream saw it, are no news).
func sameHolds(a, b []domain.HeldPartition) bool {
	key := func(hs []domain.HeldPartition) []domain.HeldPartition {
		out := make([]domain.HeldPartition, len(hs))
		for i, h := range hs {
			out[i] = domain.HeldPartition{Partition: h.Partition, Offset: h.Offset}
		}
		slices.SortFunc(out, func(x, y domain.HeldPartition) int { return domain.ComparePartitions(x.Partition, y.Partition) })
		return out
	}
	return slices.Equal(key(a), key(b))
}
