package liveness

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Config says who the worker is and how fast it is found dead.
type Config struct {
	// WorkerID names this process's lease: unique per process start.
	WorkerID string
	// Identity is the Temporal worker identity of this process, which the
	// server records on each attempt it starts here.
	Identity, Namespace, TaskQueue string
	// TTL is how long a lease lives without a renewal: a worker not heard
	// from for this long is dead, a paused one too. Default 10s.
	TTL time.Duration
	// Renew is how often the lease is renewed and the others' checked.
	// Default 1s.
	Renew time.Duration
	// LateSweepEvery and LateSweepFor: after a takeover, the dead worker is
	// taken over again this often for this long (late.go). Defaults 5s and
	// 75s.
	LateSweepEvery, LateSweepFor time.Duration
}

// Defaults of Config.
const (
	DefaultTTL   = 10 * time.Second
	DefaultRenew = time.Second
)

func (c Config) withDefaults() Config {
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	if c.Renew <= 0 {
		c.Renew = DefaultRenew
	}
	if c.LateSweepEvery <= 0 {
		c.LateSweepEvery = 5 * time.Second
	}
	if c.LateSweepFor <= 0 {
		c.LateSweepFor = 75 * time.Second
	}
	return c
}

// sessionGrace is how long a lease whose advisory lock is free (its
// worker's session ended) may go unrenewed before it is taken: its worker
// renews every Renew, so three renewals missed while the session is gone
// mean the process is.
func (c Config) sessionGrace() time.Duration { return 3 * c.Renew }

// settleAfter is how long a worker's own renewals must have succeeded
// before it takes any lease over: after a Postgres outage (or a restart of
// the worker itself) every lease looks stale until its live owner renewed
// it, which it does within a renewal or two of Postgres answering.
func (c Config) settleAfter() time.Duration { return min(5*c.Renew, c.TTL) }

// Holder keeps this worker's lease and takes over those of dead workers.
type Holder struct {
	pool *pgxpool.Pool
	cfg  Config
	reg  *Registry
	log  *slog.Logger
	lock *lockConn
	// writeMu makes writes of the lease (renewals, list writes) one at a
	// time, each with the registry's latest snapshot.
	writeMu sync.Mutex
	// takeOver hands a dead worker's attempts to the live ones (Temporal).
	takeOver func(context.Context, Lost) (Takeover, error)

	mu             sync.Mutex
	written        uint64    // the registry version the row lists (0: none yet)
	connectedSince time.Time // since when every renewal succeeded (zero: the last failed)
	stats          Stats

	late []lateSweep // dead workers taken over again for a while (late.go); Run's goroutine only
}

// Stats counts what a holder did, for the status page and tests.
type Stats struct {
	Renewals, RenewFailures int64
	Reaped                  int64 // dead leases taken over
	TakenOver               int64 // attempts failed to be retried elsewhere
	LastReaped              *Lost
}

// NewHolder returns the holder of cfg's lease; Run keeps it.
func NewHolder(pool *pgxpool.Pool, cfg Config, reg *Registry, takeOver func(context.Context, Lost) (Takeover, error), log *slog.Logger) (*Holder, error) {
	cfg = cfg.withDefaults()
	if cfg.WorkerID == "" || cfg.Identity == "" {
		return nil, errors.New("liveness: a worker id and a Temporal identity are required")
	}
	key, err := randomKey()
	if err != nil {
		return nil, err
	}
	h := &Holder{pool: pool, cfg: cfg, reg: reg, log: log, lock: &lockConn{pool: pool, key: key}, takeOver: takeOver}
	reg.onChange(h.writeList)
	return h, nil
}

// Register writes the lease now, so that the first activity the worker
// runs finds its row to be listed in: call it before the worker polls.
func (h *Holder) Register(ctx context.Context) error { return h.renew(ctx) }

// Run renews the lease and reaps dead ones every Renew until ctx ends,
// then gives the lease up: a worker that stops cleanly is not taken for
// dead.
func (h *Holder) Run(ctx context.Context) {
	t := time.NewTicker(h.cfg.Renew)
	defer t.Stop()
	for {
		h.tick(ctx)
		select {
		case <-ctx.Done():
			h.release()
			return
		case <-t.C:
		}
	}
}

// listWriteTimeout bounds the wait of a starting activity for its listing.
const listWriteTimeout = time.Second

// writeList writes the running activities into the lease now, before the
// activity that just started runs (the Registry calls it): should the
// worker die the next moment, its attempt is listed. Starts that come
// together share one write; a write that fails (Postgres slow or down)
// delays the activity at most listWriteTimeout, and the next renewal
// writes the list.
func (h *Holder) writeList() {
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	acts, version := h.reg.Snapshot()
	h.mu.Lock()
	done := h.written >= version
	h.mu.Unlock()
	if done {
		return
	}
	list, err := json.Marshal(acts)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), listWriteTimeout)
	defer cancel()
	tag, err := h.pool.Exec(ctx, `UPDATE worker_leases SET activities = $2::jsonb WHERE worker_id = $1`, h.cfg.WorkerID, string(list))
	if err != nil || tag.RowsAffected() != 1 {
		return // the next renewal writes it (or the lease itself)
	}
	h.mu.Lock()
	h.written = max(h.written, version)
	h.mu.Unlock()
}

func (h *Holder) tick(ctx context.Context) {
	if err := h.renew(ctx); err != nil {
		if ctx.Err() == nil {
			h.log.Warn("renew worker lease", "error", err)
		}
		return
	}
	if !h.settled() {
		return
	}
	if err := h.reap(ctx); err != nil && ctx.Err() == nil {
		h.log.Warn("take over dead workers", "error", err)
	}
	h.sweepLate(ctx)
}

// settled: every renewal succeeded for settleAfter, so every live worker
// that can reach Postgres had the time to renew too.
func (h *Holder) settled() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.connectedSince.IsZero() && time.Since(h.connectedSince) >= h.cfg.settleAfter()
}

// renew holds the advisory lock and moves the lease's expiry, writing the
// running activities when they changed; a lease that is gone (taken over
// while this worker was paused, or never written) is written anew.
func (h *Holder) renew(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.TTL/2)
	defer cancel()
	err := h.renewOnce(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.stats.RenewFailures++
		h.connectedSince = time.Time{}
		h.written = 0 // write the list again once Postgres answers: the row may be new
		return err
	}
	h.stats.Renewals++
	if h.connectedSince.IsZero() {
		h.connectedSince = time.Now()
	}
	return nil
}

func (h *Holder) renewOnce(ctx context.Context) error {
	// One writer of the list at a time: a renewal that snapshotted before
	// a start's write must not write its older list after it.
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	if err := h.lock.hold(ctx); err != nil {
		return err
	}
	acts, version := h.reg.Snapshot()
	h.mu.Lock()
	stale := version > h.written
	h.mu.Unlock()
	var list []byte
	if stale {
		var err error
		if list, err = json.Marshal(acts); err != nil {
			return err
		}
	}
	ttl := h.cfg.TTL.Seconds()
	tag, err := h.pool.Exec(ctx, `UPDATE worker_leases SET renewed_at = now(), expires_at = now() + make_interval(secs => $2),
		activities = COALESCE($3::jsonb, activities), lock_key = $4 WHERE worker_id = $1`,
		h.cfg.WorkerID, ttl, nullJSON(list), h.lock.key)
	if err != nil {
		return fmt.Errorf("renew lease %s: %w", h.cfg.WorkerID, err)
	}
	if tag.RowsAffected() == 0 {
		if list == nil {
			if list, err = json.Marshal(acts); err != nil {
				return err
			}
		}
		if _, err := h.pool.Exec(ctx, `INSERT INTO worker_leases (worker_id, identity, namespace, task_queue, lock_key, expires_at, activities)
			VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), $7::jsonb)`,
			h.cfg.WorkerID, h.cfg.Identity, h.cfg.Namespace, h.cfg.TaskQueue, h.lock.key, ttl, list); err != nil {
			return fmt.Errorf("write lease %s: %w", h.cfg.WorkerID, err)
		}
	}
	h.mu.Lock()
	h.written = max(h.written, version)
	h.mu.Unlock()
	return nil
}

func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// release deletes the lease of a worker stopping cleanly.
func (h *Holder) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := h.pool.Exec(ctx, `DELETE FROM worker_leases WHERE worker_id = $1`, h.cfg.WorkerID); err != nil {
		h.log.Warn("release worker lease", "error", err)
	}
	h.lock.close()
}

// Stats returns what the holder did so far.
func (h *Holder) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

func randomKey() (int64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("lease lock key: %w", err)
	}
	return int64(binary.BigEndian.Uint64(b[:])), nil
}
