package wakeup

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"handoff/internal/pgstore"
	"handoff/internal/testenv"
)

func newHub(t *testing.T) (*Hub, *pgxpool.Pool) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pgstore.New(pool).Migrate(context.Background()))
	h := Start(pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(h.Close)
	return h, pool
}

func woken(ch <-chan struct{}, within time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(within):
		return false
	}
}

func TestWakeReachesAWatcherOfAnotherHub(t *testing.T) {
	t.Parallel()
	h, pool := newHub(t)
	other := Start(pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(other.Close)
	ctx := context.Background()
	ch, done := watch(ctx, other, "g/run/stream-1")
	defer done()
	quiet, done2 := watch(ctx, other, "g/run/stream-2")
	defer done2()
	time.Sleep(200 * time.Millisecond) // the listener is up
	require.NoError(t, h.Wake(ctx, "g/run/stream-1"))
	require.True(t, woken(ch, 2*time.Second), "a notification wakes at once")
	require.False(t, woken(quiet, 300*time.Millisecond), "another key is not woken")
}

func TestWakeBeforeWatchIsNotLost(t *testing.T) {
	t.Parallel()
	h, pool := newHub(t)
	ctx := context.Background()
	require.NoError(t, h.Wake(ctx, "k1"))
	ch, done := watch(ctx, h, "k1")
	require.True(t, woken(ch, time.Second), "the recorded wake counts")
	done()
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM consume_wakeups`).Scan(&n))
	require.Zero(t, n, "a finished watch forgets its wake")
	ch2, done3 := watch(ctx, h, "k1")
	defer done3()
	require.False(t, woken(ch2, 300*time.Millisecond), "a forgotten wake does not wake the next watch")
}

// watch registers key with OnWake and returns a channel its wake closes.
func watch(ctx context.Context, h *Hub, key string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	forget := h.OnWake(ctx, key, func() { close(ch) })
	return ch, forget
}
