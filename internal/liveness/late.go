package liveness

import (
	"context"
	"time"
)

// A dead worker's attempts can start after its takeover: the long polls it
// sent before it died or paused stay open on the server until the poll
// times out (about a minute), and a task the server hands one of them, a
// retry or a new activity, is started on the dead worker, where it would
// sit until its heartbeat timeout. So the reaper takes the dead worker
// over again every LateSweepEvery for LateSweepFor after the first time,
// unless a live lease shows the worker is back (a paused one resumed):
// Config.LateSweepEvery, Config.LateSweepFor.

// lateSweep is a dead worker taken over again until until.
type lateSweep struct {
	lost        Lost
	next, until time.Time
}

// watchLate adds a dead worker just taken over to the late sweeps.
func (h *Holder) watchLate(lost Lost) {
	now := time.Now()
	h.late = append(h.late, lateSweep{lost: lost, next: now.Add(h.cfg.LateSweepEvery), until: now.Add(h.cfg.LateSweepFor)})
}

// sweepLate takes over again the dead workers whose next sweep is due.
func (h *Holder) sweepLate(ctx context.Context) {
	now := time.Now()
	kept := h.late[:0]
	for _, l := range h.late {
		if now.After(l.until) {
			continue
		}
		if !now.Before(l.next) {
			if h.back(ctx, l.lost.Identity) {
				continue
			}
			l.next = now.Add(h.cfg.LateSweepEvery)
			t, err := h.takeOver(ctx, l.lost)
			switch {
			case err != nil && ctx.Err() == nil:
				h.log.Warn("take over a dead worker's late attempts", "worker", l.lost.Identity, "error", err)
			case len(t.Failed) > 0:
				h.log.Warn("took over attempts started on a dead worker after its takeover", "worker", l.lost.Identity,
					"failed", len(t.Failed), "swept", t.Swept)
				h.mu.Lock()
				h.stats.TakenOver += int64(len(t.Failed))
				h.mu.Unlock()
			}
		}
		kept = append(kept, l)
	}
	h.late = kept
}

// back: a live lease has the identity again (the worker was paused, and
// resumed: what it runs now is its own).
func (h *Holder) back(ctx context.Context, identity string) bool {
	var live bool
	err := h.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM worker_leases WHERE identity = $1 AND expires_at > now())`, identity).Scan(&live)
	return err == nil && live
}
