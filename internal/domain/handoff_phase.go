package domain

import (
	"hash/fnv"
	"strconv"
	"time"
)

// Time-based handoffs (tuningConfig.intermediateHandoffPeriod) are spread
// over the period: each task group hands off on its own phase of it, so
// supervisors started together do not hand off together, every period,
// forever. A group's phase is stable (a hash of the supervisor id and the
// group number), so its handoffs stay a period apart once in step.

// HandoffPhase is group's offset within period, in [0, period).
func HandoffPhase(supervisorID string, group int, period time.Duration) time.Duration {
	if period <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(supervisorID))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(group)))
	return time.Duration(h.Sum64() % uint64(period))
}

// HandoffDue is when a sequence whose first record was read at first hands
// off by age: the first instant on the group's phase (phase past a whole
// number of periods since the Unix epoch) at least half a period after
// first. A sequence that reads without pause from its opening hands off a
// period after the last handoff; one that waited idle hands off between
// half a period and one and a half periods after its first record, never
// at that record just because the sequence is old.
func HandoffDue(first time.Time, period, phase time.Duration) time.Time {
	if period <= 0 {
		return time.Time{}
	}
	earliest := first.Add(period / 2)
	// The last instant on the phase at or before earliest, then the next.
	since := earliest.Sub(time.Unix(0, 0).Add(phase))
	off := since % period
	if off < 0 {
		off += period
	}
	due := earliest.Add(-off)
	if due.Before(earliest) {
		due = due.Add(period)
	}
	return due
}
