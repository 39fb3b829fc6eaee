package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/protocol"
)

// The failover phase (issue 35) SIGKILLs a worker that holds streams
// under a live producer and measures, from the signal, until the server
// sees the dead worker's attempts started elsewhere (a live worker took
// them over through its lease), and until every group has read past where
// it was at the kill (from the streams' heartbeats, which a busy stream
// sends every 2 s: at most that late). First with two workers, the killed
// one restarted at once; then with one, killed and restarted at once.

// failoverKill is one kill's figures.
type failoverKill struct {
	Mode            string  `json:"mode"` // two-workers or one-worker
	Streams         int     `json:"streams"`
	TakeoverSeconds float64 `json:"takeoverSeconds"`
	ReadSeconds     float64 `json:"readAgainSeconds"`
}

// failoverStats sums up the kills of one mode.
type failoverStats struct {
	Kills       int     `json:"kills"`
	TakeoverP50 float64 `json:"takeoverP50Seconds"`
	TakeoverP95 float64 `json:"takeoverP95Seconds"`
	ReadP50     float64 `json:"readAgainP50Seconds"`
	ReadP95     float64 `json:"readAgainP95Seconds"`
	ReadMax     float64 `json:"readAgainMaxSeconds"`
}

// failoverResult is the failover phase.
type failoverResult struct {
	Rate       float64        `json:"eventsPerSecond"`
	Kills      []failoverKill `json:"kills"`
	TwoWorkers failoverStats  `json:"twoWorkers"`
	OneWorker  failoverStats  `json:"oneWorker"`
	Events     int64          `json:"events"` // produced, each counted once in the segments
}

const failoverTopic = "bench-failover"

func runFailover(ctx context.Context, s *stack, o options, tc client.Client) (failoverResult, error) {
	res := failoverResult{Rate: o.failoverRate}
	if err := s.createTopic(ctx, failoverTopic, o.partitions); err != nil {
		return res, err
	}
	dbURL, err := s.database(ctx, "bench_failover")
	if err != nil {
		return res, err
	}
	shared := filepath.Join(s.dir, "failover")
	n := 0
	start := func() (*workerProc, error) {
		n++
		return startWorker(ctx, s, o, dbURL, filepath.Join(shared, "w"+strconv.Itoa(n)), "",
			"HANDOFF_DEEP_STORAGE="+filepath.Join(shared, "deep"), "HANDOFF_STAGING_DIR="+filepath.Join(shared, "staging"))
	}
	var workers []*workerProc
	defer func() {
		for _, w := range workers {
			_ = w.stop()
		}
	}()
	for range 2 {
		w, err := start()
		if err != nil {
			return res, err
		}
		workers = append(workers, w)
	}
	spec := backlogSpec("bench-failover", failoverTopic, o.partitions, false, true)
	pctx, stopProducing := context.WithCancel(ctx)
	defer stopProducing()
	gen := eventgen.New("bench-failover", 35)
	produced := make(chan error, 1)
	var sent int64
	go func() {
		var err error
		sent, err = gen.Produce(pctx, s.brokers, failoverTopic, o.failoverRate, 0, false)
		produced <- err
	}()
	if err := startSupervisor(ctx, tc, spec); err != nil {
		return res, err
	}
	if err := waitOrchestrating(ctx, tc, spec, workers[0], true); err != nil {
		return res, err
	}
	for _, mode := range []string{"two-workers", "one-worker"} {
		if mode == "one-worker" {
			_ = workers[1].stop() // cleanly: its lease goes, nothing to take over
			workers = workers[:1]
		}
		for range o.failoverKills {
			k, err := killStreamHolder(ctx, tc, spec, workers, start)
			if err != nil {
				return res, fmt.Errorf("failover (%s): %w", mode, err)
			}
			k.Mode = mode
			res.Kills = append(res.Kills, k)
			logf("failover (%s): streams taken over %.1f s after the SIGKILL, read again after %.1f s", mode, k.TakeoverSeconds, k.ReadSeconds)
			if err := sleep(ctx, workers[0], 5*time.Second); err != nil {
				return res, err
			}
		}
	}
	stopProducing()
	if err := <-produced; err != nil {
		return res, fmt.Errorf("producer: %w", err)
	}
	if err := stopSupervisor(ctx, tc, spec.ID); err != nil {
		return res, err
	}
	res.Events = sent
	res.TwoWorkers, res.OneWorker = failoverSummary(res.Kills, "two-workers"), failoverSummary(res.Kills, "one-worker")
	return res, verifyWith(ctx, dbURL, spec, sent)
}

// killStreamHolder SIGKILLs the worker running the most streams, starts a
// new one in its place at once, and measures the takeover.
func killStreamHolder(ctx context.Context, tc client.Client, spec domain.Spec, workers []*workerProc, start func() (*workerProc, error)) (failoverKill, error) {
	var k failoverKill
	victim, streams := -1, 0
	for i, w := range workers {
		n := 0
		for _, a := range harness.StartedActivities(ctx, tc, spec) {
			if a.Type == protocol.ActivityConsumeStream && strings.HasPrefix(a.Worker, strconv.Itoa(w.pid())+"@") {
				n++
			}
		}
		if n > streams {
			victim, streams = i, n
		}
	}
	if victim < 0 {
		return k, fmt.Errorf("no worker runs a stream")
	}
	before, err := harness.StreamOffsets(ctx, tc, spec)
	if err != nil {
		return k, err
	}
	prefix := strconv.Itoa(workers[victim].pid()) + "@"
	at := time.Now()
	if err := workers[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return k, err
	}
	<-workers[victim].done
	w, err := start()
	if err != nil {
		return k, err
	}
	workers[victim] = w
	k.Streams = streams
	for k.TakeoverSeconds == 0 || k.ReadSeconds == 0 {
		if time.Since(at) > 3*time.Minute {
			return k, fmt.Errorf("not recovered within 3 minutes of the SIGKILL")
		}
		if k.TakeoverSeconds == 0 && !slices.ContainsFunc(harness.StartedActivities(ctx, tc, spec), func(a harness.StartedActivity) bool {
			return strings.HasPrefix(a.Worker, prefix)
		}) {
			k.TakeoverSeconds = time.Since(at).Seconds()
		}
		if k.ReadSeconds == 0 {
			if pos, err := harness.StreamOffsets(ctx, tc, spec); err == nil && passed(pos, before) {
				k.ReadSeconds = time.Since(at).Seconds()
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return k, nil
}

// passed: every partition read beyond where it was.
func passed(pos, before domain.Offsets) bool {
	for p, o := range before {
		if pos[p] <= o {
			return false
		}
	}
	return true
}

func failoverSummary(kills []failoverKill, mode string) failoverStats {
	var take, read []float64
	for _, k := range kills {
		if k.Mode == mode {
			take, read = append(take, k.TakeoverSeconds), append(read, k.ReadSeconds)
		}
	}
	if len(take) == 0 {
		return failoverStats{}
	}
	slices.Sort(take)
	slices.Sort(read)
	return failoverStats{
		Kills:       len(take),
		TakeoverP50: quantile(take, 0.5), TakeoverP95: quantile(take, 0.95),
		ReadP50: quantile(read, 0.5), ReadP95: quantile(read, 0.95), ReadMax: read[len(read)-1],
	}
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// verifyWith checks the segments of spec in dbURL count want events.
func verifyWith(ctx context.Context, dbURL string, spec domain.Spec, want int64) error {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	return verifyCount(ctx, pool, spec, want)
}

func printFailover(w io.Writer, r failoverResult) {
	fmt.Fprintf(w, "\nFailover: a worker holding streams SIGKILLed under %.0f events/s and restarted at once (%d events, each published once):\n\n", r.Rate, r.Events)
	fmt.Fprintln(w, "| workers | kills | attempts taken over p50 / p95 | groups read again p50 / p95 / max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, m := range []struct {
		name string
		s    failoverStats
	}{{"two (the other takes over)", r.TwoWorkers}, {"one (its restart takes over)", r.OneWorker}} {
		fmt.Fprintf(w, "| %s | %d | %.1f / %.1f s | %.1f / %.1f / %.1f s |\n", m.name, m.s.Kills, m.s.TakeoverP50, m.s.TakeoverP95, m.s.ReadP50, m.s.ReadP95, m.s.ReadMax)
	}
}
