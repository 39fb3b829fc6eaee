package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// peerResult is DuckDB doing the pipeline's transform on the same events
// (bench/peer/duckdb.mjs): from a JSONL file of the backlog to one zstd
// Parquet file sorted by __time, rollup off and on.
type peerResult struct {
	Engine   string        `json:"engine"`
	Version  string        `json:"version"`
	Threads  int           `json:"threads"`
	Variants []peerVariant `json:"variants"`
}

type peerVariant struct {
	Name    string    `json:"name"` // rollup-off, rollup-on: as the pipeline's variants
	Seconds float64   `json:"seconds"`
	Runs    []float64 `json:"runs"`
	Rows    int64     `json:"rows"`
	Events  int64     `json:"events"`
	// EventsPerSecond is the backlog's events over the best run.
	EventsPerSecond float64 `json:"eventsPerSecond"`
}

// peerRepeat: the peer's best of this many runs counts.
const peerRepeat = 3

// writeJSONL writes the backlog's events, one per line, as produced.
func writeJSONL(path string, b *backlog) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range b.n {
		w.Write(b.event(i))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runPeer writes the backlog (the same events, from the same seed and
// end) to a JSONL file under dir and has DuckDB convert it with as many
// threads as the machine has cores.
func runPeer(ctx context.Context, o options, dir string, n int64, end time.Time) (*peerResult, error) {
	script, err := filepath.Abs(o.peerScript)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "@duckdb", "node-api")); err != nil {
		return nil, fmt.Errorf("peer: DuckDB is not installed beside %s: run `npm ci --prefix %s` (make bench does), or -peer '' to skip the peer", script, filepath.Dir(o.peerScript))
	}
	peerDir := filepath.Join(dir, "peer")
	if err := os.MkdirAll(peerDir, 0o755); err != nil {
		return nil, err
	}
	jsonl := filepath.Join(peerDir, "backlog.jsonl")
	if err := writeJSONL(jsonl, newBacklog(n, o.partitions, end)); err != nil {
		return nil, fmt.Errorf("peer: write %s: %w", jsonl, err)
	}
	defer os.Remove(jsonl)
	threads := runtime.NumCPU()
	logf("peer: DuckDB converting %d events from JSONL, %d threads, best of %d", n, threads, peerRepeat)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", script, jsonl, peerDir, fmt.Sprint(threads), fmt.Sprint(peerRepeat))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("peer: node %s: %w\n%s", o.peerScript, err, stderr.String())
	}
	res := &peerResult{Engine: "DuckDB"}
	if err := json.Unmarshal(stdout.Bytes(), res); err != nil {
		return nil, fmt.Errorf("peer: its output %q: %w", stdout.String(), err)
	}
	for i := range res.Variants {
		v := &res.Variants[i]
		if v.Events != n {
			return nil, fmt.Errorf("peer: %s holds %d events, %d were written", v.Name, v.Events, n)
		}
		v.EventsPerSecond = float64(n) / v.Seconds
		logf("peer: %s %.2f s (%.0f events/s), %d rows", v.Name, v.Seconds, v.EventsPerSecond, v.Rows)
	}
	return res, nil
}

// peerRate is the peer's rate for a pipeline variant's name (the variants
// without the table compare with the same peer figure), 0 if none.
func (p *peerResult) peerRate(variant string) float64 {
	if p == nil {
		return 0
	}
	if variant == variants["off-no-table"].name || variant == variants["off-txn"].name {
		variant = variants["off"].name
	}
	for _, v := range p.Variants {
		if v.Name == variant {
			return v.EventsPerSecond
		}
	}
	return 0
}
