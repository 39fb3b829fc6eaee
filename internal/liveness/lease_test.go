package liveness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"handoff/internal/pgstore"
	"handoff/internal/testenv"
)

// fastConfig finds a dead worker in a test's time.
func fastConfig(id string) Config {
	return Config{WorkerID: id, Identity: id + "@host@", Namespace: "default", TaskQueue: "q", TTL: 2 * time.Second, Renew: 100 * time.Millisecond}
}

// takeovers records what a holder asked to take over.
type takeovers struct {
	mu   sync.Mutex
	lost []Lost
}

func (t *takeovers) fn(_ context.Context, l Lost) (Takeover, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lost = append(t.lost, l)
	return Takeover{Failed: l.Activities}, nil
}

func (t *takeovers) all() []Lost {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Lost(nil), t.lost...)
}

func leasePool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pgstore.New(pool).Migrate(context.Background()))
	return pool
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// holder starts a holder that runs until the returned stop, which waits
// for it to release its lease.
func holder(t *testing.T, pool *pgxpool.Pool, cfg Config, reg *Registry, tk *takeovers) (*Holder, func()) {
	t.Helper()
	h, err := NewHolder(pool, cfg, reg, tk.fn, quiet)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	stop := sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return h, stop
}

func leaseCount(t *testing.T, pool *pgxpool.Pool, id string) int {
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM worker_leases WHERE worker_id = $1`, id).Scan(&n))
	return n
}

// killable runs a holder's ticks until kill, which stops them and ends its
// lock's session without giving the lease up, as a killed process does.
func killable(t *testing.T, pool *pgxpool.Pool, cfg Config, reg *Registry, tk *takeovers) (*Holder, func()) {
	t.Helper()
	h, err := NewHolder(pool, cfg, reg, tk.fn, quiet)
	require.NoError(t, err)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			h.tick(context.Background())
			select {
			case <-stop:
				return
			case <-time.After(h.cfg.Renew):
			}
		}
	}()
	return h, func() { close(stop); <-done; h.lock.close() }
}

// A worker whose process ends (its session goes, its lease stays) is
// found within the session grace, long before its lease expires, and its
// running activities are handed over once.
func TestDeadWorkerIsTakenOverWhenItsSessionEnds(t *testing.T) {
	t.Parallel()
	pool := leasePool(t)
	var tkA, tkB takeovers
	regA := NewRegistry()
	ref := ActivityRef{WorkflowID: "supervisor/x/group-0", RunID: "r1", ActivityID: "stream-3", Type: "ConsumeStream", Attempt: 1}
	regA.add(ref)
	cfg := fastConfig("a")
	cfg.TTL = 5 * time.Second
	a, kill := killable(t, pool, cfg, regA, &tkA)
	b, _ := holder(t, pool, fastConfig("b"), NewRegistry(), &tkB)
	require.Eventually(t, func() bool { return a.Stats().Renewals > 3 && b.settled() }, 10*time.Second, 20*time.Millisecond)

	killed := time.Now()
	kill()
	require.Eventually(t, func() bool { return len(tkB.all()) == 1 }, 10*time.Second, 20*time.Millisecond)
	took := time.Since(killed)
	lost := tkB.all()[0]
	require.Equal(t, "a", lost.WorkerID)
	require.Equal(t, "a@host@", lost.Identity)
	require.Equal(t, []ActivityRef{ref}, lost.Activities)
	require.Contains(t, lost.Why, "session")
	require.Less(t, took, 3*time.Second, "found by its free lock, before its 5 s lease expired")
	require.Empty(t, tkA.all())
	t.Logf("found dead %v after its session ended", took.Round(time.Millisecond))
}

// A paused worker keeps its session but stops renewing: it is found when
// its lease expires; when it wakes it writes its lease again.
func TestPausedWorkerIsTakenOverWhenItsLeaseExpires(t *testing.T) {
	t.Parallel()
	pool := leasePool(t)
	var tkA, tkB takeovers
	a, _ := holder(t, pool, fastConfig("a"), NewRegistry(), &tkA)
	b, _ := holder(t, pool, fastConfig("b"), NewRegistry(), &tkB)
	require.Eventually(t, func() bool { return a.Stats().Renewals > 3 && b.settled() }, 10*time.Second, 20*time.Millisecond)

	paused := time.Now()
	a.mu.Lock() // a pauses with its session open
	require.Eventually(t, func() bool { return len(tkB.all()) == 1 }, 10*time.Second, 20*time.Millisecond)
	took := time.Since(paused)
	require.Contains(t, tkB.all()[0].Why, "expired")
	require.GreaterOrEqual(t, took, 1500*time.Millisecond, "a live session is not taken before the lease expires")
	require.Zero(t, leaseCount(t, pool, "a"))
	a.mu.Unlock() // it wakes
	require.Eventually(t, func() bool { return leaseCount(t, pool, "a") == 1 }, 5*time.Second, 20*time.Millisecond, "a woken worker writes its lease again")
	time.Sleep(500 * time.Millisecond)
	require.Len(t, tkB.all(), 1, "taken over once")
}

// A worker that stops cleanly gives its lease up: nobody takes it over.
// And nobody reaps before its own renewals have run for a whole TTL.
func TestCleanStopIsNotTakenOverAndNewHoldersWait(t *testing.T) {
	t.Parallel()
	pool := leasePool(t)
	var tkA, tkB takeovers
	a, stopA := holder(t, pool, fastConfig("a"), NewRegistry(), &tkA)
	require.Eventually(t, func() bool { return a.Stats().Renewals > 2 }, 10*time.Second, 20*time.Millisecond)
	// A lease left by a worker dead before b started: b waits a TTL.
	_, err := pool.Exec(context.Background(), `INSERT INTO worker_leases (worker_id, identity, namespace, task_queue, lock_key, renewed_at, expires_at)
		VALUES ('old', 'old@host@', 'default', 'q', 1, now() - interval '1 minute', now() - interval '50 seconds')`)
	require.NoError(t, err)
	b, _ := holder(t, pool, fastConfig("b"), NewRegistry(), &tkB)
	time.Sleep(200 * time.Millisecond)
	require.False(t, b.settled(), "reaping waits five renewals")
	require.Empty(t, tkB.all())
	stopA()
	require.Zero(t, leaseCount(t, pool, "a"))
	require.Eventually(t, func() bool { return len(tkA.all())+len(tkB.all()) == 1 }, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, "old", tkB.all()[0].WorkerID, "only the dead one: %v", tkB.all())
	time.Sleep(500 * time.Millisecond)
	require.Len(t, tkB.all(), 1, fmt.Sprint(tkB.all()))
}

// The lease lists what the worker runs, rewritten when it changes.
func TestLeaseListsRunningActivities(t *testing.T) {
	t.Parallel()
	pool := leasePool(t)
	reg := NewRegistry()
	a, _ := holder(t, pool, fastConfig("a"), reg, &takeovers{})
	ref := ActivityRef{WorkflowID: "w", RunID: "r", ActivityID: "1", Type: "Publish", Attempt: 2}
	reg.add(ref)
	listed := func() string {
		var s string
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT activities::text FROM worker_leases WHERE worker_id = 'a'`).Scan(&s))
		return s
	}
	require.Eventually(t, func() bool { return a.Stats().Renewals > 1 && listed() != "[]" }, 5*time.Second, 20*time.Millisecond)
	require.JSONEq(t, `[{"workflowId":"w","runId":"r","activityId":"1","type":"Publish","attempt":2}]`, listed())
	reg.remove(ref)
	require.Eventually(t, func() bool { return !strings.Contains(listed(), "Publish") }, 5*time.Second, 20*time.Millisecond)
	require.JSONEq(t, `[{"workflowId":"w","runId":"r"}]`, listed(), "the run it served stays listed a while")
}

// A dead worker is taken over again for a while after its takeover: its
// long polls outlive it, and attempts the server hands them start there.
// Once its identity holds a live lease again (it was paused and resumed),
// that stops.
func TestDeadWorkerIsTakenOverAgainUntilItIsBack(t *testing.T) {
	t.Parallel()
	pool := leasePool(t)
	var tkA, tkB takeovers
	cfgB := fastConfig("b")
	cfgB.LateSweepEvery, cfgB.LateSweepFor = 200*time.Millisecond, time.Minute
	a, _ := holder(t, pool, fastConfig("a"), NewRegistry(), &tkA)
	b, _ := holder(t, pool, cfgB, NewRegistry(), &tkB)
	require.Eventually(t, func() bool { return a.Stats().Renewals > 3 && b.settled() }, 10*time.Second, 20*time.Millisecond)

	a.mu.Lock() // a pauses
	wake := sync.OnceFunc(a.mu.Unlock)
	t.Cleanup(wake) // before a's holder stops, should the test fail while a is paused
	require.Eventually(t, func() bool { return len(tkB.all()) >= 3 }, 10*time.Second, 20*time.Millisecond, "taken over, then again")
	for _, l := range tkB.all() {
		require.Equal(t, "a@host@", l.Identity)
	}
	wake() // it wakes and writes its lease again
	require.Eventually(t, func() bool { return leaseCount(t, pool, "a") == 1 }, 5*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // a sweep that had begun ends
	n := len(tkB.all())
	time.Sleep(time.Second)
	require.Equal(t, n, len(tkB.all()), "not taken over once it is back")
}
