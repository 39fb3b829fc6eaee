package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcStopsOnTerm(t *testing.T) {
	t.Parallel()
	p, err := startProc("sleeper", filepath.Join(t.TempDir(), "log"), nil, "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.stop(5 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("stop took %v", d)
	}
}

func TestProcKilledAfterGrace(t *testing.T) {
	t.Parallel()
	p, err := startProc("stubborn", filepath.Join(t.TempDir(), "log"), nil,
		"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.05; done`)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the trap be set
	err = p.stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("stop = %v, want a killed error", err)
	}
}

func TestProcUnexpectedExitShowsLog(t *testing.T) {
	t.Parallel()
	p, err := startProc("crasher", filepath.Join(t.TempDir(), "log"), []string{"WHAT=boom"}, "sh", "-c", `echo "$WHAT"; exit 3`)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("did not exit")
	}
	err = p.exitError()
	if !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("exitError = %v", err)
	}
	if p.stop(time.Second) == nil {
		t.Fatal("stop after a crash reported no error")
	}
}
