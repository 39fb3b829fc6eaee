package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
)

const backlogTopic = "bench"

// result is everything one run measured.
type result struct {
	Machine        machine `json:"machine"`
	Events         int64   `json:"events"`
	MeanEventBytes float64 `json:"meanEventBytes"`
	Partitions     int     `json:"partitions"`
	TaskCount      int     `json:"taskCount"`
	CeilingSeconds float64 `json:"ceilingSeconds"`
	CeilingRate    float64 `json:"ceilingEventsPerSecond"`
	// ParseRate is the ceiling's reads plus JSON parsing, nothing else.
	ParseRate float64 `json:"readAndParseEventsPerSecond"`
	// Peer is DuckDB doing the same transform (issue 17).
	Peer     *peerResult     `json:"peer,omitempty"`
	Variants []variantResult `json:"variants"`
	// TxnAbortedEvents are the aborted events of the transactional
	// backlog (variant off-txn), beside its o.events committed ones.
	TxnAbortedEvents int64 `json:"txnAbortedEvents,omitempty"`
	// AvroMeanEventBytes is the mean registry-framed Avro event of the
	// Avro backlog (variant off-avro).
	AvroMeanEventBytes float64 `json:"avroMeanEventBytes,omitempty"`
	// Handoff is the latency with the Iceberg table, HandoffNoTable the
	// same with ioConfig.icebergTable false.
	Handoff        *handoffResult `json:"handoff,omitempty"`
	HandoffNoTable *handoffResult `json:"handoffNoTable,omitempty"`
	// Table is what the Iceberg table costs, from the runs above (issue 15).
	Table *tableCost `json:"table,omitempty"`
	// TableGrowth is the table metadata after many publications.
	TableGrowth []tableGrowthRun `json:"tableGrowth,omitempty"`
	// Catalog is the Iceberg REST catalog serving a large table.
	Catalog *catalogResult `json:"catalog,omitempty"`
	// Orchestration is what Temporal costs idle and at a steady rate.
	Orchestration *orchestrationResult `json:"orchestration,omitempty"`
	// Failover is the failover phase (issue 35).
	Failover *failoverResult `json:"failover,omitempty"`
	// Many is the many phase (issue 37).
	Many *manyResult `json:"many,omitempty"`
	// Compaction is the compaction phase (issue 16).
	Compaction *compactionResult `json:"compaction,omitempty"`
	Wall       string            `json:"wall"`
	Command    string            `json:"command"`
	StartedAt  time.Time         `json:"startedAt"`

	backlogEnd time.Time // the backlog's events end here (newBacklog)
}

type machine struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	MemoryGiB int64  `json:"memoryGiB"`
	Go        string `json:"go"`
	OS        string `json:"os"`
}

// variant is one way of draining the backlog.
type variant struct {
	name   string // rollup-off, rollup-on, rollup-off-no-table, rollup-off-txn, rollup-off-avro
	rollup bool
	table  bool // ioConfig.icebergTable
	txn    bool // the transactional backlog (txn_backlog.go)
	avro   bool // the Avro backlog (avro_backlog.go)
	// input is the spec's input format when not JSON (set per run).
	input *domain.InputFormat
}

// variants are the values of -variants.
var variants = map[string]variant{
	"off":          {name: "rollup-off", table: true},
	"on":           {name: "rollup-on", rollup: true, table: true},
	"off-no-table": {name: "rollup-off-no-table"},
	"off-txn":      {name: "rollup-off-txn", table: true, txn: true},
	"off-avro":     {name: "rollup-off-avro", table: true, avro: true},
}

func parseVariants(s string) ([]string, error) {
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		switch v = strings.TrimSpace(v); {
		case variants[v].name != "":
			out = append(out, v)
		case v == "":
		default:
			return nil, fmt.Errorf("-variants: unknown variant %q (want off, on, off-no-table, off-txn, off-avro)", v)
		}
	}
	return out, nil
}

// parseOnOff reads a list of on and off.
func parseOnOff(flag, s string) ([]bool, error) {
	var out []bool
	for v := range strings.SplitSeq(s, ",") {
		switch v = strings.TrimSpace(v); v {
		case "on":
			out = append(out, true)
		case "off":
			out = append(out, false)
		case "":
		default:
			return nil, fmt.Errorf("%s: unknown value %q (want on, off)", flag, v)
		}
	}
	return out, nil
}

// The phases of a run, in the order they run.
var allPhases = []string{"backlog", "handoff", "orchestration", "failover", "compaction", "tablegrowth", "catalog", "many"}

func parsePhases(s string) ([]string, error) {
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		switch v = strings.TrimSpace(v); {
		case slices.Contains(allPhases, v):
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		case v == "":
		default:
			return nil, fmt.Errorf("-phases: unknown phase %q (want %s)", v, strings.Join(allPhases, ", "))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-phases %q: want at least one of %s", s, strings.Join(allPhases, ", "))
	}
	return out, nil
}

func run(ctx context.Context, o options) (result, error) {
	res := result{
		Machine: readMachine(), Partitions: o.partitions, TaskCount: o.taskCount,
		Command: "go run ./bench " + strings.Join(os.Args[1:], " "), StartedAt: time.Now().UTC(),
	}
	dir := o.workDir
	if dir == "" {
		d, err := os.MkdirTemp("", "handoff-bench-*")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(d)
		// Postgres runs as its own OS user when we are root: it must be
		// able to reach its directory inside this one.
		if err := os.Chmod(d, 0o755); err != nil {
			return res, err
		}
		dir = d
	}
	s, err := startStack(ctx, o, dir)
	if err != nil {
		return res, err
	}
	defer s.close()
	var tc client.Client
	if s.temporal != "" {
		if tc, err = s.client(); err != nil {
			return res, fmt.Errorf("temporal client: %w", err)
		}
		defer tc.Close()
	}

	if slices.Contains(o.phases, "backlog") {
		if err := runBacklog(ctx, s, o, tc, &res); err != nil {
			return res, err
		}
	}
	if slices.Contains(o.phases, "handoff") && o.checkpoints > 0 {
		for _, table := range o.handoffTables {
			logf("handoff latency: %d checkpoints at %.0f events/s, %s", o.checkpoints, o.liveRate, tableWord(table))
			h, err := runHandoff(ctx, s, o, tc, table)
			if err != nil {
				return res, fmt.Errorf("handoff latency, %s: %w", tableWord(table), err)
			}
			if table {
				res.Handoff = &h
			} else {
				res.HandoffNoTable = &h
			}
		}
	}
	res.Table = compareTable(res)
	if slices.Contains(o.phases, "orchestration") {
		r, err := runOrchestration(ctx, s, o, tc)
		if err != nil {
			return res, fmt.Errorf("orchestration: %w", err)
		}
		res.Orchestration = &r
	}
	if slices.Contains(o.phases, "failover") {
		logf("failover: %d SIGKILLs of a stream holder with two workers, %d with one, at %.0f events/s", o.failoverKills, o.failoverKills, o.failoverRate)
		r, err := runFailover(ctx, s, o, tc)
		if err != nil {
			return res, fmt.Errorf("failover: %w", err)
		}
		res.Failover = &r
	}
	if slices.Contains(o.phases, "many") {
		logf("many: %d supervisors of one %d-partition topic each at %.1f events/s, handoffs every %v", o.many, o.manyPartitions, o.manyRate, o.manyHandoff)
		r, err := runMany(ctx, s, o, tc)
		if err != nil {
			return res, fmt.Errorf("many: %w", err)
		}
		res.Many = &r
	}
	if slices.Contains(o.phases, "compaction") {
		ends, err := ensureBacklog(ctx, s, o, &res)
		if err != nil {
			return res, err
		}
		r, err := runCompaction(ctx, s, o, tc, ends)
		if err != nil {
			return res, fmt.Errorf("compaction: %w", err)
		}
		res.Compaction = &r
	}
	if slices.Contains(o.phases, "tablegrowth") {
		for _, g := range growthRetentions(o) {
			logf("table growth, %s: %d publications", g.name, slices.Max(o.growthMarks))
			r, err := runTableGrowth(ctx, s, o, g)
			if err != nil {
				return res, fmt.Errorf("table growth, %s: %w", g.name, err)
			}
			res.TableGrowth = append(res.TableGrowth, r)
		}
	}
	if slices.Contains(o.phases, "catalog") {
		logf("catalog: a table of %d snapshots, loads one at a time and %d bursts of %d", o.catalogSnapshots, o.catalogBursts, o.catalogBurst)
		r, err := runCatalog(ctx, s, o)
		if err != nil {
			return res, fmt.Errorf("catalog: %w", err)
		}
		res.Catalog = &r
	}
	return res, nil
}

// runBacklog produces the backlog, reads it for the ceiling and drains it
// with each variant.
func runBacklog(ctx context.Context, s *stack, o options, tc client.Client, res *result) error {
	ends, err := ensureBacklog(ctx, s, o, res)
	if err != nil {
		return err
	}

	// The ceiling is the best of three plain reads.
	for i := range 3 {
		d, err := readAll(ctx, s.brokers, backlogTopic, ends)
		if err != nil {
			return err
		}
		logf("ceiling read %d: %v", i+1, d.Round(time.Millisecond))
		if res.CeilingSeconds == 0 || d.Seconds() < res.CeilingSeconds {
			res.CeilingSeconds = d.Seconds()
		}
	}
	res.CeilingRate = float64(o.events) / res.CeilingSeconds
	d, err := readAndParse(ctx, s.brokers, backlogTopic, ends, backlogSpec("parse", backlogTopic, o.taskCount, false, false))
	if err != nil {
		return fmt.Errorf("read and parse: %w", err)
	}
	res.ParseRate = float64(o.events) / d.Seconds()
	logf("read and parse: %v", d.Round(time.Millisecond))
	if o.peerScript != "" {
		if res.Peer, err = runPeer(ctx, o, s.dir, o.events, res.backlogEnd); err != nil {
			return err
		}
	}

	txnEnds, err := txnBacklogIfAsked(ctx, s, o, res)
	if err != nil {
		return err
	}
	avroEnds, avroIn, err := avroBacklogIfAsked(ctx, s, o, res)
	if err != nil {
		return err
	}
	for run := 1; run <= o.repeat; run++ {
		// Every other run goes in reverse order, so that no variant always
		// runs first: the first of a run was up to 15% slower on this VM,
		// whichever it was.
		order := slices.Clone(o.variants)
		if run%2 == 0 {
			slices.Reverse(order)
		}
		for _, k := range order {
			v := variants[k]
			logf("%s (run %d of %d): draining the backlog", v.name, run, o.repeat)
			topic, vends := backlogTopic, ends
			if v.txn {
				topic, vends = txnBacklogTopic, txnEnds
			}
			if v.avro {
				topic, vends, v.input = avroBacklogTopic, avroEnds, avroIn
			}
			vr, err := runVariant(ctx, s, o, tc, v, run, topic, vends, res.CeilingRate)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			if rate := res.Peer.peerRate(v.name); rate > 0 {
				vr.PeerRatio = vr.EventsPerSecond / rate
			}
			res.Variants = append(res.Variants, vr)
		}
	}
	return nil
}

// ensureBacklog produces the backlog once (res.Events tells whether it
// has been) and returns each partition's end offset.
func ensureBacklog(ctx context.Context, s *stack, o options, res *result) (domain.Offsets, error) {
	ends := domain.Offsets{}
	for p := range o.partitions {
		ends[domain.P(int32(p))] = o.events / int64(o.partitions)
		if int64(p) < o.events%int64(o.partitions) {
			ends[domain.P(int32(p))]++
		}
	}
	if res.Events > 0 {
		return ends, nil
	}
	res.backlogEnd = time.Now()
	if err := s.createTopic(ctx, backlogTopic, o.partitions); err != nil {
		return nil, err
	}
	logf("producing %d events to %s (%d partitions)", o.events, backlogTopic, o.partitions)
	b := newBacklog(o.events, o.partitions, res.backlogEnd)
	bytes, err := produceBacklog(ctx, s.brokers, backlogTopic, b)
	if err != nil {
		return nil, err
	}
	res.Events = o.events
	res.MeanEventBytes = float64(bytes) / float64(o.events)
	return ends, nil
}

func readMachine() machine {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			m.MemoryGiB = (kb + 1<<19) >> 20
		}
	}
	return m
}
