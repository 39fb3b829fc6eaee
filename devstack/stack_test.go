package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestUnwindReversesAndReportsAll(t *testing.T) {
	t.Parallel()
	var order []string
	var logs bytes.Buffer
	s := &stack{errw: &logs}
	for _, name := range []string{"a", "b", "c"} {
		s.onStop(name, func() error {
			order = append(order, name)
			if name == "b" {
				return errors.New("b failed")
			}
			return nil
		})
	}
	err := s.unwind()
	if got := strings.Join(order, ","); got != "c,b,a" {
		t.Fatalf("order %s, want c,b,a", got)
	}
	if err == nil || !strings.Contains(err.Error(), "stop b: b failed") {
		t.Fatalf("unwind = %v", err)
	}
	if s.unwind() != nil || len(order) != 3 {
		t.Fatal("second unwind ran closers again")
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	c, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.rate != 200 || c.spec != "examples/wiki.json" || c.noGenerator || c.partitions != 4 {
		t.Fatalf("defaults = %+v", c)
	}
	c, err = parseFlags([]string{"--events-per-second", "0", "--no-generator", "--spec", "x.json"}, &bytes.Buffer{})
	if err != nil || c.rate != 0 || !c.noGenerator || c.spec != "x.json" {
		t.Fatalf("parse = %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"--events-per-second", "-1"}, {"--partitions", "0"}, {"extra"}, {"--nope"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestPortsAndWait(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if err := checkPortsFree(map[string]int{"taken": port}); err == nil {
		t.Fatal("a taken port passed as free")
	}
	if err := waitTCP(t.Context(), ln.Addr().String(), time.Second, nil); err != nil {
		t.Fatalf("waitTCP on a listener: %v", err)
	}
	ln.Close()
	// Port 0 can never be listened on; the port just closed could be taken
	// by another test's listener at once.
	const nothing = "127.0.0.1:0"
	exited := make(chan struct{})
	close(exited)
	if err := waitTCP(t.Context(), nothing, time.Second, exited); err == nil {
		t.Fatal("waitTCP succeeded with nothing listening")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := waitTCP(ctx, nothing, time.Minute, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waitTCP = %v, want the deadline", err)
	}
}
