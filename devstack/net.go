package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// checkPortsFree fails early, with a hint, when another devstack or a
// system service holds a port the stack needs.
func checkPortsFree(ports map[string]int) error {
	for name, port := range ports {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("port %d (%s) is in use: stop whatever holds it (`ss -ltnp 'sport = :%d'`): %w", port, name, port, err)
		}
		ln.Close()
	}
	return nil
}

// waitTCP polls addr until it accepts a connection, exited closes (the
// server died), or timeout or ctx ends.
func waitTCP(ctx context.Context, addr string, timeout time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before listening on %s", addr)
		case <-ctx.Done():
			return fmt.Errorf("nothing listening on %s: %w", addr, ctx.Err())
		case <-tick.C:
		}
	}
}
