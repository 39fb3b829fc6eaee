// Package wakeup tells a running consume stream, on whichever worker it
// runs, that its task group wants it to return now. A task group learns of
// a checkpoint, a stop or new partitions through its history; the stream
// it runs is an activity that a workflow can otherwise reach only through a
// cancellation, which arrives with the next heartbeat (tens of seconds on
// a quiet topic). Here a wake is a row in consume_wakeups (durable) plus a
// NOTIFY on one channel (immediate); every worker keeps one connection
// listening, and checks the table for its registered streams whenever that
// connection was lost and every checkEvery besides, so no wake is missed.
// None of it writes Temporal history.
package wakeup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// channel is the NOTIFY channel every worker listens on.
const channel = "handoff_wakeup"

// checkEvery is how often the registered keys are looked up in the table
// besides notifications: the bound on a wake whose notification was lost.
const checkEvery = 15 * time.Second

// retryListenAfter is the pause before the listening connection is opened
// again after it failed.
const retryListenAfter = time.Second

// Hub delivers wakes to the streams of this process.
type Hub struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu      sync.Mutex
	waiters map[string]*waiter

	cancel context.CancelFunc
	done   chan struct{}
}

// waiter is one registered key: a wake calls fn, once.
type waiter struct {
	fn   func()
	once sync.Once
}

func (w *waiter) fire() { w.once.Do(w.fn) }

// New makes a hub; Start begins listening and Close stops it. Wake works
// without Start; OnWake needs it.
func New(pool *pgxpool.Pool, log *slog.Logger) *Hub {
	return &Hub{pool: pool, log: log, waiters: map[string]*waiter{}}
}

// Start begins listening, until Close.
func (h *Hub) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go h.run(ctx)
}

// Start makes a hub and starts it.
func Start(pool *pgxpool.Pool, log *slog.Logger) *Hub {
	h := New(pool, log)
	h.Start()
	return h
}

// Close stops listening and waits for the listener to end.
func (h *Hub) Close() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	<-h.done
}

// Wake asks the stream named key to return: durably, then at once.
func (h *Hub) Wake(ctx context.Context, key string) error {
	if _, err := h.pool.Exec(ctx, `INSERT INTO consume_wakeups (wake_key) VALUES ($1) ON CONFLICT (wake_key) DO NOTHING`, key); err != nil {
		return fmt.Errorf("record wake %s: %w", key, err)
	}
	if _, err := h.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, key); err != nil {
		return fmt.Errorf("notify wake %s: %w", key, err)
	}
	return nil
}

// OnWake registers key: fn runs once a wake for it is seen (also one
// recorded before OnWake was called), on the hub's listener or within
// OnWake, and must not block; a caller needs no goroutine of its own
// waiting for it. forget unregisters the key and forgets the wake.
func (h *Hub) OnWake(ctx context.Context, key string, fn func()) (forget func()) {
	w := &waiter{fn: fn}
	h.mu.Lock()
	h.waiters[key] = w
	h.mu.Unlock()
	if woken, err := h.recorded(ctx, []string{key}); err == nil && len(woken) > 0 {
		w.fire()
	}
	return func() {
		h.mu.Lock()
		if h.waiters[key] == w {
			delete(h.waiters, key)
		}
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := h.pool.Exec(ctx, `DELETE FROM consume_wakeups WHERE wake_key = $1`, key); err != nil {
			h.log.Warn("forget wake", "key", key, "error", err)
		}
	}
}

func (h *Hub) run(ctx context.Context) {
	defer close(h.done)
	h.sweep(ctx)
	for ctx.Err() == nil {
		err := h.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("wakeup listener lost its connection; checking the table meanwhile", "error", err)
		h.checkAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryListenAfter):
		}
	}
}

// listen holds one connection on LISTEN until it fails; it checks the
// table once listening (a wake may have come while it was not) and every
// checkEvery.
func (h *Hub) listen(ctx context.Context) error {
	pooled, err := h.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that listened is not handed back to the pool.
	conn := pooled.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN handoff_wakeup`); err != nil {
		return err
	}
	h.checkAll(ctx)
	for {
		wctx, cancel := context.WithTimeout(ctx, checkEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			h.fire(n.Payload)
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			h.checkAll(ctx)
		default:
			return err
		}
	}
}

func (h *Hub) fire(key string) {
	h.mu.Lock()
	w := h.waiters[key]
	h.mu.Unlock()
	if w != nil {
		w.fire()
	}
}

// checkAll fires every registered key that has a recorded wake.
func (h *Hub) checkAll(ctx context.Context) {
	h.mu.Lock()
	keys := make([]string, 0, len(h.waiters))
	for k := range h.waiters {
		keys = append(keys, k)
	}
	h.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	woken, err := h.recorded(ctx, keys)
	if err != nil {
		h.log.Warn("check wakes", "error", err)
		return
	}
	for _, k := range woken {
		h.fire(k)
	}
}

func (h *Hub) recorded(ctx context.Context, keys []string) ([]string, error) {
	rows, err := h.pool.Query(ctx, `SELECT wake_key FROM consume_wakeups WHERE wake_key = ANY($1)`, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// sweep removes wakes older than a day: their streams ended long ago
// (a wake key names one activity of one run, so none can match again).
func (h *Hub) sweep(ctx context.Context) {
	if _, err := h.pool.Exec(ctx, `DELETE FROM consume_wakeups WHERE requested_at < now() - interval '1 day'`); err != nil && ctx.Err() == nil {
		h.log.Warn("sweep old wakes", "error", err)
	}
}
