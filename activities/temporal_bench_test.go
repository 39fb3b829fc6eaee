package activities_test

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/testenv"
)

// The Temporal overhead stage of the bench's breakdown is what the worker
// process spends in the SDK and gRPC: per activity it runs (poll, start,
// complete, and the workflow task that schedules the next), and per
// heartbeat it sends. These benchmarks measure both against the dev server,
// as worker CPU (user + system of this process; the server runs in its own)
// per operation, reported as cpu-µs/op beside the wall time.

const benchQueue = "temporal-cost-bench"

// benchActivitiesPerRun keeps each benchmark workflow's history far below
// Temporal's limits: a run of n activities is about 6n events.
const benchActivitiesPerRun = 500

// benchThrottle is the worker's heartbeat throttle in these benchmarks: a
// heartbeat recorded later than this after the previous one is sent.
const benchThrottle = time.Millisecond

func benchNoop(context.Context) error { return nil }

// benchHeartbeats records n heartbeats, each after the SDK's throttle has
// passed, so every one of them is sent to the server.
func benchHeartbeats(ctx context.Context, n int, gap time.Duration) error {
	for i := range n {
		time.Sleep(gap)
		activity.RecordHeartbeat(ctx, i)
	}
	return nil
}

// benchSequence runs n no-op activities one after another, as a group runs
// its consume and publish activities.
func benchSequence(ctx workflow.Context, n int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	for range n {
		if err := workflow.ExecuteActivity(ctx, benchNoop).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// benchHeartbeating runs benchHeartbeats. The worker's heartbeat throttle
// (benchThrottle) is below gap, so the timeout can stay generous.
func benchHeartbeating(ctx workflow.Context, n int, gap time.Duration) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, benchHeartbeats, n, gap).Get(ctx, nil)
}

func benchWorker(b *testing.B) client.Client {
	b.Helper()
	c, err := client.Dial(client.Options{HostPort: testenv.Temporal(b), Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	w := worker.New(c, benchQueue, worker.Options{
		MaxHeartbeatThrottleInterval:     benchThrottle,
		DefaultHeartbeatThrottleInterval: benchThrottle,
	})
	w.RegisterWorkflow(benchSequence)
	w.RegisterWorkflow(benchHeartbeating)
	w.RegisterActivity(benchNoop)
	w.RegisterActivity(benchHeartbeats)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	return c
}

func runBenchWorkflow(b *testing.B, c client.Client, wf any, args ...any) {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        fmt.Sprintf("temporal-cost-%d", time.Now().UnixNano()),
		TaskQueue: benchQueue,
	}, wf, args...)
	if err != nil {
		b.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkActivityRoundTrip is one activity of a sequential workflow.
func BenchmarkActivityRoundTrip(b *testing.B) {
	c := benchWorker(b)
	runBenchWorkflow(b, c, benchSequence, 10) // warm: connections, caches
	cpu := startCPU()
	for left := b.N; left > 0; left -= benchActivitiesPerRun {
		runBenchWorkflow(b, c, benchSequence, min(left, benchActivitiesPerRun))
	}
	cpu.report(b)
}

// BenchmarkHeartbeat is one heartbeat sent from a running activity.
func BenchmarkHeartbeat(b *testing.B) {
	c := benchWorker(b)
	const gap = 2 * time.Millisecond
	cpu := startCPU()
	runBenchWorkflow(b, c, benchHeartbeating, b.N, gap)
	cpu.report(b)
}

// processCPU is the CPU this process has used since it was taken.
type processCPU struct{ start time.Duration }

func startCPU() processCPU { return processCPU{start: cpuUsed()} }

func (p processCPU) report(b *testing.B) {
	b.ReportMetric(float64((cpuUsed()-p.start).Microseconds())/float64(b.N), "cpu-µs/op")
}

func cpuUsed() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
