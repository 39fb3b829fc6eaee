package liveness

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// reap takes over every dead lease no other worker is taking: expired, or
// with its advisory lock free and unrenewed for sessionGrace. Each is
// handled in a transaction of its own that holds its row, and deleted once
// its attempts are failed; a reaper that dies half-way leaves the row to
// the next, and what it failed stays failed (takeOver skips attempts that
// moved on).
func (h *Holder) reap(ctx context.Context) error {
	for range 16 { // bounded per tick: the next tick takes the rest
		lost, t, done, err := h.reapOne(ctx)
		if err != nil || done {
			return err
		}
		h.log.Warn("took over a dead worker's activities", "worker", lost.Identity, "lease", lost.WorkerID,
			"why", lost.Why, "lastRenewed", lost.LastSeen, "listed", len(lost.Activities),
			"failed", len(t.Failed), "unlisted", t.Unlisted, "swept", t.Swept)
		h.watchLate(lost) // late.go
	}
	return nil
}

func (h *Holder) reapOne(ctx context.Context) (lost Lost, t Takeover, done bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = pgx.BeginFunc(ctx, h.pool, func(tx pgx.Tx) error {
		var acts []byte
		var expired bool
		err := tx.QueryRow(ctx, `SELECT worker_id, identity, namespace, activities, renewed_at, expires_at < now()
			FROM worker_leases
			WHERE worker_id <> $1 AND namespace = $3
			  AND (expires_at < now() OR (renewed_at < now() - make_interval(secs => $2) AND pg_try_advisory_xact_lock(lock_key)))
			ORDER BY expires_at
			LIMIT 1
			FOR UPDATE SKIP LOCKED`, h.cfg.WorkerID, h.cfg.sessionGrace().Seconds(), h.cfg.Namespace).
			Scan(&lost.WorkerID, &lost.Identity, &lost.Namespace, &acts, &lost.LastSeen, &expired)
		if err == pgx.ErrNoRows {
			done = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("find dead leases: %w", err)
		}
		if err := json.Unmarshal(acts, &lost.Activities); err != nil {
			return fmt.Errorf("lease %s lists its activities as %q: %w", lost.WorkerID, acts, err)
		}
		lost.Why = "its process ended: its session's lock is free"
		if expired {
			lost.Why = "its lease expired"
		}
		t, err = h.takeOver(ctx, lost)
		if err != nil {
			return fmt.Errorf("take over %s: %w", lost.Identity, err)
		}
		h.record(lost, t)
		_, err = tx.Exec(ctx, `DELETE FROM worker_leases WHERE worker_id = $1`, lost.WorkerID)
		return err
	})
	return lost, t, done, err
}

func (h *Holder) record(lost Lost, t Takeover) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats.Reaped++
	h.stats.TakenOver += int64(len(t.Failed))
	l := lost
	h.stats.LastReaped = &l
}
