package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CPUProfileEnv names a file the worker writes a CPU profile of its whole
// life to (the benchmark's -cpuprofile sets it). Unset: no profiling.
const CPUProfileEnv = "HANDOFF_CPU_PROFILE"

// startCPUProfile starts profiling into path and returns what stops it and
// flushes the file; with an empty path both do nothing.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CPUProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: start CPU profile: %w", CPUProfileEnv, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", CPUProfileEnv, err)
		}
		return nil
	}, nil
}
