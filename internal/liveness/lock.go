package liveness

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockConn is a connection of the worker's own, taken out of the pool,
// holding a session-level advisory lock on key for as long as it lives:
// when the worker's process dies, Postgres ends its session and frees the
// lock, which the others see at once (reap).
type lockConn struct {
	pool *pgxpool.Pool
	key  int64
	conn *pgx.Conn
}

// hold makes sure the lock is held, connecting and locking again after its
// connection broke (a Postgres restart ends every session).
func (l *lockConn) hold(ctx context.Context) error {
	if l.conn != nil {
		if err := l.conn.Ping(ctx); err == nil {
			return nil
		}
		l.close()
	}
	pc, err := l.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect for the lease lock: %w", err)
	}
	conn := pc.Hijack()
	for range 3 {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, l.key).Scan(&ok); err != nil {
			closeConn(conn)
			return fmt.Errorf("take the lease lock: %w", err)
		}
		if ok {
			l.conn = conn
			return nil
		}
		// Another session holds this key (a collision of random keys):
		// take another, which the next renewal writes to the lease.
		if l.key, err = randomKey(); err != nil {
			closeConn(conn)
			return err
		}
	}
	closeConn(conn)
	return fmt.Errorf("take the lease lock: three keys in a row are held by other sessions")
}

func (l *lockConn) close() {
	if l.conn != nil {
		closeConn(l.conn)
		l.conn = nil
	}
}

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}
