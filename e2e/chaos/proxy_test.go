package chaos

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// proxy forwards TCP connections from a fixed local port to a target. Cut
// makes the target unreachable: open connections are closed and new ones
// refused (nothing listens on the port) until Restore.
type proxy struct {
	t      *testing.T
	port   int
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, port: freePort(t), target: target, conns: map[net.Conn]bool{}}
	p.Restore()
	t.Cleanup(p.Cut)
	return p
}

func (p *proxy) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// Restore listens again.
func (p *proxy) Restore() {
	p.t.Helper()
	var ln net.Listener
	var err error
	// The port was ours a moment ago; retry in case the kernel holds it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ln, err = net.Listen("tcp", p.addr()); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		p.t.Fatalf("proxy listen %s: %v", p.addr(), err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.accept(ln)
}

// Cut closes the listener and every open connection.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *proxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *proxy) forward(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		c.Close()
		up.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// track registers both ends unless the proxy is cut.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}
