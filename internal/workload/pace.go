package workload

import (
	"context"
	"time"
)

// DefaultCompactShare is Limits.CompactShare's default.
const DefaultCompactShare = 0.5

// IngestBusyWindow: ingestion is busy while a consume or publish reported
// progress this recently (a consume reports every 1,024 records).
const IngestBusyWindow = 500 * time.Millisecond

// maxPause bounds one pause, so a long step is not followed by a longer
// sleep than the heartbeat can cover.
const maxPause = time.Second

// IngestBusy says whether a consume or publish made progress within
// IngestBusyWindow of now.
func (t *Tracker) IngestBusy(now time.Time) bool {
	last := t.ingestAt.Load()
	return last != 0 && now.Sub(time.Unix(0, last)) < IngestBusyWindow
}

// Pacer paces background work (compaction) behind ingestion: the work
// calls Step after each piece, and while ingestion is busy Step sleeps so
// that the work takes at most Limits.CompactShare of the time.
type Pacer struct {
	t     *Tracker
	since time.Time
	// Paused is the time Step slept in all.
	Paused time.Duration
}

// Pacer starts pacing from now; a nil Tracker's Pacer never pauses.
func (t *Tracker) Pacer() *Pacer {
	if t == nil {
		return nil
	}
	return &Pacer{t: t, since: time.Now()}
}

// Step ends one piece of work: the time since the last Step (or the
// Pacer's start) was work. It returns the context's error if it ends
// during the pause.
func (p *Pacer) Step(ctx context.Context) error {
	if p == nil {
		return nil
	}
	now := time.Now()
	worked := now.Sub(p.since)
	p.since = now
	share := p.t.limits.CompactShare
	if share >= 1 || !p.t.IngestBusy(now) {
		return nil
	}
	pause := min(time.Duration(float64(worked)*(1/share-1)), maxPause)
	if pause <= 0 {
		return nil
	}
	timer := time.NewTimer(pause)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
	}
	p.Paused += pause
	p.since = time.Now()
	return nil
}
