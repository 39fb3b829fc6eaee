// Command bench measures the pipeline against the machine's own ceiling:
// it brings up Postgres, the Temporal dev server, an in-process Kafka broker
// and a worker process, produces a backlog of realistic events, times the
// fastest plain read of that backlog (the ceiling) and then the pipeline
// draining it into committed segments, once with rollup off and once on.
// The backlog also drains with rollup off and the Iceberg table off, for
// what the table costs. A phase measures handoff latency, from a
// checkpoint to its commit, under a live producer (with the table and
// without), and one what orchestration costs in Temporal history,
// activities and heartbeats when a supervisor is idle and at a steady
// rate. An optional phase, tablegrowth, measures a table's metadata after
// thousands of publications; another, catalog, the Iceberg REST catalog
// server's loads of a table with 10,000 snapshots. It prints markdown tables and writes JSON.
//
//	go run ./bench -events 2000000 -json bench-result.json
//
// `make bench` builds the worker and runs it with the defaults.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// options is the command line.
type options struct {
	phases      []string
	events      int64
	partitions  int
	taskCount   int
	variants    []string
	repeat      int
	checkpoints int
	liveRate    float64
	jsonPath    string
	cpuProfile  string
	workerBin   string
	memLimit    string
	temporalBin string
	workDir     string
	// handoffTables are the handoff phase's runs: the Iceberg table on, off.
	handoffTables []bool

	// The orchestration phase.
	idle            time.Duration
	steady          time.Duration
	steadyRate      float64
	orchCheckpoints int
	orchSpec        string

	// peerScript is the DuckDB peer's script ("": no peer).
	peerScript string

	// The failover phase.
	failoverKills int
	failoverRate  float64
	// The many phase.
	many           int
	manyPartitions int
	manyRate       float64
	manyHandoff    time.Duration
	manyChunk      time.Duration
	manyWindow     time.Duration

	// The compaction phase.
	compactMemLimit   string
	compactIdle       time.Duration
	compactIdlePeriod time.Duration

	// The table-growth phase.
	growthMarks    []int         // publications after which to measure; runs to the largest
	growthShortAge time.Duration // the short retention's maxSnapshotAge (0: no short run)
	growthDefault  bool          // whether to run with the default retention
	growthLoads    int           // loads per load-time median
	// growthRenew: a new lake.Lake every so many publications (0: one).
	growthRenew      int
	growthMaxHeapMiB float64

	// The catalog phase.
	starterBin       string
	catalogPublishes int // real publications
	catalogSnapshots int // snapshots the table keeps
	catalogLoads     int // one at a time
	catalogBurst     int // concurrent loads of a burst
	catalogBursts    int
}

func parseOptions(args []string) (options, error) {
	var o options
	var variantList, phases, handoffTables, marks string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&phases, "phases", "backlog,handoff,orchestration,failover,compaction", "phases to run, comma-separated: backlog (ceiling and pipeline), handoff (latency at -live-rate), orchestration (Temporal cost idle and at -steady-rate), failover (a worker holding streams SIGKILLed: time until its attempts run elsewhere and its groups read again), compaction (the backlog compacted from small segments, rollup off and re-rolled up; ingestion beside a compaction; the idle compaction workflow), tablegrowth (Iceberg table metadata after -growth-publishes publications; not in the default), catalog (the Iceberg REST catalog's loadTable of a table with -catalog-snapshots snapshots, one at a time and in bursts; not in the default), many (-many supervisors of one small topic each on one worker: read gaps at handoffs, CPU, memory and Temporal cost per supervisor; not in the default)")
	fs.Int64Var(&o.events, "events", 2_000_000, "events in the backlog")
	fs.IntVar(&o.partitions, "partitions", 4, "partitions of the topic")
	fs.IntVar(&o.taskCount, "task-count", 2, "task groups (ioConfig.taskCount)")
	fs.StringVar(&variantList, "variants", "off,off-no-table,on,off-txn,off-avro", "variants to drain the backlog with, comma-separated: off (rollup off), off-no-table (rollup off, ioConfig.icebergTable false), on (rollup on), off-txn (rollup off, the same events produced in transactions with aborted ones between, read committed), off-avro (rollup off, the same events as registry-framed Avro, schema from an in-process registry)")
	fs.IntVar(&o.many, "many", 100, "many: supervisors on one worker, one topic each")
	fs.IntVar(&o.manyPartitions, "many-partitions", 2, "many: partitions of each topic")
	fs.Float64Var(&o.manyRate, "many-rate", 2, "many: events per second to each topic (0: idle topics)")
	fs.DurationVar(&o.manyHandoff, "many-handoff", time.Minute, "many: each spec's intermediateHandoffPeriod")
	fs.DurationVar(&o.manyChunk, "many-chunk-period", 0, "many: each spec's chunkPeriod (0: the default)")
	fs.DurationVar(&o.manyWindow, "many-window", 3*time.Minute, "many: how long to measure once every supervisor runs")
	fs.IntVar(&o.failoverKills, "failover-kills", 5, "failover: SIGKILLs with two workers, and as many with one (each restarted at once)")
	fs.Float64Var(&o.failoverRate, "failover-rate", 1000, "failover: events per second of the producer")
	fs.IntVar(&o.repeat, "repeat", 1, "runs of each variant, every other run in reverse order (off, off-no-table, on, on, off-no-table, off, ...): the table's cost compares the medians")
	fs.IntVar(&o.checkpoints, "checkpoints", 20, "checkpoints in the handoff-latency phase (0 skips it)")
	fs.Float64Var(&o.liveRate, "live-rate", 5000, "events per second of the live producer in the handoff-latency phase")
	fs.StringVar(&handoffTables, "handoff-tables", "on,off", "the handoff-latency phase's runs, comma-separated: on (the Iceberg table), off (ioConfig.icebergTable false)")
	fs.DurationVar(&o.idle, "idle", 2*time.Minute, "orchestration: how long to count an idle supervisor (0 skips it)")
	fs.DurationVar(&o.steady, "steady", 2*time.Minute, "orchestration: how long to count a supervisor at -steady-rate (0 skips it)")
	fs.Float64Var(&o.steadyRate, "steady-rate", 200, "orchestration: events per second of the steady phase")
	fs.IntVar(&o.orchCheckpoints, "steady-checkpoints", 20, "orchestration: checkpoints after the steady window, for the handoff cost and latency at -steady-rate (0: none)")
	fs.StringVar(&o.orchSpec, "orchestration-spec", "examples/wiki.json", "orchestration: the spec both phases use, under their own names (the steady phase with the default handoff settings)")
	fs.StringVar(&marks, "growth-publishes", "1000,10000", "tablegrowth: publications after which to measure the table's metadata, comma-separated; the phase publishes up to the largest")
	fs.DurationVar(&o.growthShortAge, "growth-short-age", time.Second, "tablegrowth: maxSnapshotAge of the run with a short retention, after the one with the default (0: default retention only)")
	fs.BoolVar(&o.growthDefault, "growth-default", true, "tablegrowth: the run with the default retention (false: only the short one; the default's publications cost more as its snapshots pile up, about an hour to 10,000)")
	fs.IntVar(&o.growthLoads, "growth-loads", 5, "tablegrowth: loads per load-time median")
	fs.IntVar(&o.growthRenew, "growth-renew", 0, "tablegrowth: a new lake.Lake (empty cache, as after a worker restart) every so many publications; 0: one for the whole run, as a worker; a multiple of 50 keeps the maintenance cadence")
	fs.Float64Var(&o.growthMaxHeapMiB, "growth-max-heap", 3072, "tablegrowth: stop a run whose live heap, checked every 50 publications, exceeds this many MiB")
	fs.StringVar(&o.starterBin, "starter", ".dev/bin/starter", "catalog: starter binary (make build), run as `starter catalog serve`")
	fs.IntVar(&o.catalogPublishes, "catalog-publishes", 200, "catalog: real publications to the table (each a snapshot) before its history is extended")
	fs.IntVar(&o.catalogSnapshots, "catalog-snapshots", 10_000, "catalog: snapshots the table keeps once its history is extended (copies of the real ones)")
	fs.IntVar(&o.catalogLoads, "catalog-loads", 50, "catalog: loads one at a time, for their median")
	fs.IntVar(&o.catalogBurst, "catalog-burst", 1000, "catalog: concurrent loads in a burst")
	fs.IntVar(&o.catalogBursts, "catalog-bursts", 3, "catalog: bursts, the first with the server's cache cold")
	fs.StringVar(&o.peerScript, "peer", "bench/peer/duckdb.mjs", "backlog: the DuckDB peer's script, run with node, with its packages beside it (npm ci --prefix bench/peer); \"\" skips the peer")
	fs.StringVar(&o.compactMemLimit, "compaction-memory-limit", "256MiB", "compaction: GOMEMLIMIT of the worker that compacts")
	fs.DurationVar(&o.compactIdle, "compaction-idle", time.Minute, "compaction: how long to count the history of the compaction workflow with nothing to do (0 skips it)")
	fs.DurationVar(&o.compactIdlePeriod, "compaction-idle-period", 10*time.Second, "compaction: the config's period while counting idle rounds (the history per round does not depend on it; per day is scaled to the default period)")
	fs.StringVar(&o.jsonPath, "json", "bench-result.json", "file to write the results to as JSON")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "have the worker write a CPU profile per variant to this path prefix (e.g. cpu: cpu-rollup-off.pprof)")
	fs.StringVar(&o.workerBin, "worker", ".dev/bin/worker", "worker binary (make build)")
	fs.StringVar(&o.memLimit, "worker-memory-limit", "256MiB", "the worker's GOMEMLIMIT, which its consume push-back also measures against (\"\": none)")
	fs.StringVar(&o.temporalBin, "temporal", "", "temporal CLI for the dev server (default: $HANDOFF_TEMPORAL_BIN or .tools/bin/temporal)")
	fs.StringVar(&o.workDir, "dir", "", "directory for the run's data (default: a new temp dir, removed at the end)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	var err error
	if o.variants, err = parseVariants(variantList); err != nil {
		return options{}, err
	}
	if o.handoffTables, err = parseOnOff("-handoff-tables", handoffTables); err != nil {
		return options{}, err
	}
	if o.growthMarks, err = parseMarks(marks); err != nil {
		return options{}, err
	}
	if o.phases, err = parsePhases(phases); err != nil {
		return options{}, err
	}
	switch {
	case fs.NArg() > 0:
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.events < 1000:
		return options{}, fmt.Errorf("-events %d: want at least 1000", o.events)
	case o.partitions < 1 || o.taskCount < 1 || o.taskCount > o.partitions:
		return options{}, fmt.Errorf("-partitions %d -task-count %d: want 1 <= task count <= partitions", o.partitions, o.taskCount)
	case o.checkpoints < 0 || (o.checkpoints > 0 && o.liveRate <= 0):
		return options{}, fmt.Errorf("-checkpoints %d -live-rate %v: want checkpoints >= 0 and a positive rate", o.checkpoints, o.liveRate)
	case o.idle < 0 || o.steady < 0 || o.orchCheckpoints < 0:
		return options{}, fmt.Errorf("-idle %v -steady %v -steady-checkpoints %d: want none negative", o.idle, o.steady, o.orchCheckpoints)
	case o.steady > 0 && o.steadyRate <= 0:
		return options{}, fmt.Errorf("-steady-rate %v: want a positive rate", o.steadyRate)
	case o.compactIdle < 0 || o.compactIdlePeriod < time.Second:
		return options{}, fmt.Errorf("-compaction-idle %v -compaction-idle-period %v: want idle >= 0 and a period of 1s or more", o.compactIdle, o.compactIdlePeriod)
	case o.many < 1 || o.manyPartitions < 1 || o.manyRate < 0 || o.manyHandoff <= 0 || o.manyWindow <= 0 || o.manyChunk < 0:
		return options{}, fmt.Errorf("-many %d -many-partitions %d -many-rate %v -many-handoff %v -many-window %v: want a rate of 0 (idle) or more and the rest positive", o.many, o.manyPartitions, o.manyRate, o.manyHandoff, o.manyWindow)
	case o.repeat < 1:
		return options{}, fmt.Errorf("-repeat %d: want at least 1", o.repeat)
	case o.catalogPublishes < 1 || o.catalogSnapshots < o.catalogPublishes || o.catalogLoads < 1 || o.catalogBurst < 1 || o.catalogBursts < 1:
		return options{}, fmt.Errorf("-catalog-publishes %d -catalog-snapshots %d -catalog-loads %d -catalog-burst %d -catalog-bursts %d: want 1 <= publishes <= snapshots and the rest at least 1",
			o.catalogPublishes, o.catalogSnapshots, o.catalogLoads, o.catalogBurst, o.catalogBursts)
	case o.growthShortAge < 0 || o.growthLoads < 1:
		return options{}, fmt.Errorf("-growth-short-age %v -growth-loads %d: want an age >= 0 and at least one load", o.growthShortAge, o.growthLoads)
	case !o.growthDefault && o.growthShortAge == 0:
		return options{}, fmt.Errorf("-growth-default=false -growth-short-age 0: no retention left to run")
	case o.growthRenew < 0 || o.growthMaxHeapMiB <= 0:
		return options{}, fmt.Errorf("-growth-renew %d -growth-max-heap %v: want renew >= 0 and a positive heap", o.growthRenew, o.growthMaxHeapMiB)
	}
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	res, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	res.Wall = time.Since(start).Round(time.Second).String()
	printReport(os.Stdout, res)
	if err := writeJSON(o.jsonPath, res); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	logf("results written to %s (%s in all)", o.jsonPath, res.Wall)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %s: "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
