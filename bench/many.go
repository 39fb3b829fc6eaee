package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// The many phase (issue 37) runs -many supervisors on one worker, one
// small topic each (-many-partitions partitions, taskCount 1, -many-rate
// events a second, a handoff every -many-handoff), for -many-window after
// all of them run, and measures what each costs the worker and Temporal,
// how long groups stop reading at their handoffs (handoff_read_gap_seconds)
// and, once all are stopped, that every datasource holds each event once.

// manyResult is the many phase.
type manyResult struct {
	Supervisors   int     `json:"supervisors"`
	Partitions    int     `json:"partitionsEach"`
	Rate          float64 `json:"eventsPerSecondEach"`
	Handoff       string  `json:"handoffPeriod"`
	ChunkPeriod   string  `json:"chunkPeriod"`
	WindowSeconds float64 `json:"windowSeconds"`
	// StartSeconds is from the first start until all run.
	StartSeconds float64 `json:"startSeconds"`
	// The read gaps the worker observed in the window, from its histogram
	// (a percentile is the bucket's upper bound).
	ReadGaps     int64   `json:"readGaps"`
	ReadGapP50   float64 `json:"readGapP50Seconds"`
	ReadGapP95   float64 `json:"readGapP95Seconds"`
	ReadGapOver1 int64   `json:"readGapsOver1s"`
	// Worker and Temporal server CPU in the window, % of one core, per
	// supervisor; the worker's resident memory at the end.
	WorkerCPUPerSupervisor   float64 `json:"workerCpuPercentPerSupervisor"`
	TemporalCPUPerSupervisor float64 `json:"temporalCpuPercentPerSupervisor"`
	WorkerRSSMiB             float64 `json:"workerRssMiB"`
	// The worker's memory at the window's end, split: RssAnon (RSS less
	// the binary's and libraries' file pages) and, from its Go metrics,
	// the heap in use, its goal (where the next collection starts: what
	// the heap may grow to), goroutine stacks and goroutines.
	WorkerAnonMiB float64 `json:"workerRssAnonMiB"`
	HeapInuseMiB  float64 `json:"heapInuseMiB"`
	HeapGoalMiB   float64 `json:"heapGoalMiB"`
	StackMiB      float64 `json:"stackInuseMiB"`
	Goroutines    int     `json:"goroutines"`
	// KafkaConnections are the worker's connections to the broker at the
	// window's end.
	KafkaConnections    int     `json:"kafkaConnections"`
	RSSPerSupervisorMiB float64 `json:"rssMiBPerSupervisor"`
	// Handoffs are the sequences published in the window; history and
	// heartbeats are per handoff and per supervisor and day.
	Handoffs int64 `json:"handoffs"`
	// History counts the events written in the window, of the supervisors
	// and of their groups.
	History           int64 `json:"historyEvents"`
	SupervisorHistory int64 `json:"supervisorHistoryEvents"`
	// ByType counts them by workflow ("supervisor" or "group") and event
	// type (signals by name).
	ByType                  map[string]int64 `json:"historyByType"`
	HistoryPerHandoff       float64          `json:"historyEventsPerHandoff"`
	HistoryPerSupervisorDay float64          `json:"historyEventsPerSupervisorPerDay"`
	HeartbeatsPerGroupDay   float64          `json:"heartbeatsPerGroupPerDay"`
	Events                  int64            `json:"events"` // produced, each counted once in its datasource
	ExactDatasources        int              `json:"exactDatasources"`
}

func manySpec(base domain.Spec, i int, o options) (domain.Spec, error) {
	s, err := orchestrationSpec(base, fmt.Sprintf("many-%04d", i), true)
	if err != nil {
		return s, err
	}
	s.IOConfig.TaskCount = 1
	s.TuningConfig.IntermediateHandoffPeriod = domain.Duration(o.manyHandoff)
	if o.manyChunk > 0 {
		s.TuningConfig.ChunkPeriod = domain.Duration(o.manyChunk)
	}
	return s, s.Validate()
}

func runMany(ctx context.Context, s *stack, o options, tc client.Client) (manyResult, error) {
	res := manyResult{Supervisors: o.many, Partitions: o.manyPartitions, Rate: o.manyRate, Handoff: o.manyHandoff.String(), WindowSeconds: o.manyWindow.Seconds()}
	b, err := os.ReadFile(o.orchSpec)
	if err != nil {
		return res, err
	}
	base, err := domain.ParseSpec(b)
	if err != nil {
		return res, err
	}
	specs := make([]domain.Spec, o.many)
	for i := range specs {
		if specs[i], err = manySpec(base, i, o); err != nil {
			return res, err
		}
		if err := s.createTopic(ctx, specs[i].IOConfig.Topic, o.manyPartitions); err != nil {
			return res, err
		}
	}
	res.ChunkPeriod = specs[0].TuningConfig.ChunkPeriod.D().String()
	profile := "" // -cpuprofile: the worker's whole life, start-up included
	if o.cpuProfile != "" {
		profile, _ = filepath.Abs(o.cpuProfile + "-many.pprof")
	}
	pool, w, done, err := startPhase(ctx, s, o, "many", profile)
	if err != nil {
		return res, err
	}
	defer done()

	pctx, stopProducing := context.WithCancel(ctx)
	defer stopProducing()
	var produced sync.WaitGroup
	var produceErr error
	var mu sync.Mutex
	for i, spec := range specs {
		if o.manyRate == 0 {
			break // idle topics
		}
		produced.Go(func() {
			_, err := eventgen.New(spec.ID, uint64(i+1)).Produce(pctx, s.brokers, spec.IOConfig.Topic, o.manyRate, 0, false)
			if err != nil && pctx.Err() == nil {
				mu.Lock()
				produceErr = err
				mu.Unlock()
			}
		})
	}

	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, spec := range specs {
		g.Go(func() error { return startSupervisor(gctx, tc, spec) })
	}
	if err := g.Wait(); err != nil {
		return res, err
	}
	if err := waitAllRunning(ctx, tc, specs, w, o.manyRate == 0); err != nil {
		return res, err
	}
	res.StartSeconds = time.Since(start).Seconds()
	if err := sleep(ctx, w, orchestrationSettle); err != nil { // past the start-up transient
		return res, err
	}
	logf("many: %d supervisors running after %.1f s; measuring %v", o.many, res.StartSeconds, o.manyWindow)

	a, err := manySnapshot(ctx, s, w, pool)
	if err != nil {
		return res, err
	}
	if err := sleep(ctx, w, o.manyWindow); err != nil {
		return res, err
	}
	z, err := manySnapshot(ctx, s, w, pool)
	if err != nil {
		return res, err
	}
	res.setWindow(a, z, o.many)

	stopProducing()
	produced.Wait()
	if produceErr != nil {
		return res, fmt.Errorf("producer: %w", produceErr)
	}
	if err := waitAllCaughtUp(ctx, s, tc, specs, o.manyPartitions, w); err != nil {
		return res, err
	}
	logf("many: stopping %d supervisors", o.many)
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, spec := range specs {
		g.Go(func() error { return stopSupervisor(gctx, tc, spec.ID) })
	}
	if err := g.Wait(); err != nil {
		return res, err
	}
	if err := res.countHistory(ctx, tc, specs, a.at, z.at); err != nil {
		return res, err
	}
	for _, spec := range specs {
		committed, err := committedOffsets(ctx, pool, spec)
		if err != nil {
			return res, err
		}
		ends, err := topicEnds(ctx, s.brokers, spec.IOConfig.Topic, o.manyPartitions)
		if err != nil {
			return res, err
		}
		if !sameOffsets(committed, ends) {
			return res, fmt.Errorf("%s: committed offsets %v, topic ends %v: a stop publishes everything read", spec.ID, committed, ends)
		}
		if err := verifyCount(ctx, pool, spec, committed.Sum()); err != nil {
			return res, err
		}
		res.Events += committed.Sum()
		res.ExactDatasources++
	}
	return res, nil
}

// waitAllRunning waits until every supervisor runs its group and, idle,
// has seen its topic caught up (IDLE).
func waitAllRunning(ctx context.Context, tc client.Client, specs []domain.Spec, w *workerProc, idle bool) error {
	deadline := time.Now().Add(5 * time.Minute)
	pending := specs
	for len(pending) > 0 {
		var still []domain.Spec
		for _, spec := range pending {
			st, err := supervisorStatus(ctx, tc, spec.ID)
			running := st.State == workflows.StateIdle || (!idle && st.State == workflows.StateRunning)
			if err != nil || !running || len(st.Groups) == 0 || !st.Groups[0].Running {
				still = append(still, spec)
			}
		}
		pending = still
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d supervisors not running after 5 minutes (%s first); see %s",
				len(pending), len(specs), describeStuck(ctx, tc, filepath.Dir(w.logPath), pending[0].ID), w.logPath)
		}
		if err := sleep(ctx, w, time.Second); err != nil {
			return err
		}
	}
	return nil
}

// sameOffsets compares offsets, a partition missing from one being at 0
// (an idle topic's datasource has no stored offsets).
func sameOffsets(a, b domain.Offsets) bool {
	for p, o := range a {
		if b[p] != o {
			return false
		}
	}
	for p, o := range b {
		if a[p] != o {
			return false
		}
	}
	return true
}

// waitAllCaughtUp waits until every group has read its topic to the end,
// so that the stops publish every event produced.
func waitAllCaughtUp(ctx context.Context, s *stack, tc client.Client, specs []domain.Spec, partitions int, w *workerProc) error {
	deadline := time.Now().Add(3 * time.Minute)
	for _, spec := range specs {
		ends, err := topicEnds(ctx, s.brokers, spec.IOConfig.Topic, partitions)
		if err != nil {
			return err
		}
		for {
			pos, err := harness.GroupPositions(ctx, tc, spec)
			if err == nil && pos.Equal(ends) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: groups at %v, not at the topic's end %v, 3 minutes after the producers stopped; see %s", spec.ID, pos, ends, w.logPath)
			}
			if err := sleep(ctx, w, 200*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// manyPoint is what the phase reads at each end of its window.
type manyPoint struct {
	at                    time.Time
	workerCPU, serverCPU  float64 // seconds
	rssBytes, anonBytes   int64
	goMem                 map[string]float64 // the worker's Go memory gauges
	conns                 int
	gaps                  *dto.Histogram
	heartbeats, published int64
}

func manySnapshot(ctx context.Context, s *stack, w *workerProc, pool *pgxpool.Pool) (manyPoint, error) {
	p := manyPoint{at: time.Now(), heartbeats: -1}
	var err error
	if p.workerCPU, err = cpuSeconds(w.pid()); err != nil {
		return p, err
	}
	if pid := serverPID(s); pid > 0 {
		p.serverCPU, _ = cpuSeconds(pid)
	}
	if p.rssBytes, err = residentRSS(w.pid()); err != nil {
		return p, err
	}
	if p.anonBytes, err = statusKB(w.pid(), "RssAnon"); err != nil {
		return p, err
	}
	if p.goMem, err = scrapeGauges(ctx, w.metricsURL, goMemGauges...); err != nil {
		return p, err
	}
	if _, port, ok := strings.Cut(s.brokers[0], ":"); ok {
		n, _ := strconv.Atoi(port)
		if p.conns, err = tcpConnections(w.pid(), n); err != nil {
			return p, err
		}
	}
	if p.gaps, err = scrapeHistogram(ctx, w.metricsURL, "handoff_read_gap_seconds"); err != nil {
		return p, err
	}
	if s.metricsURL != "" {
		if p.heartbeats, err = serverHeartbeats(ctx, s.metricsURL, s.namespace); err != nil {
			return p, err
		}
	}
	err = pool.QueryRow(ctx, `SELECT count(*) FROM published_sequences WHERE datasource LIKE 'many_%'`).Scan(&p.published)
	return p, err
}

func (r *manyResult) setWindow(a, z manyPoint, n int) {
	secs := z.at.Sub(a.at).Seconds()
	r.WorkerCPUPerSupervisor = 100 * (z.workerCPU - a.workerCPU) / secs / float64(n)
	r.TemporalCPUPerSupervisor = 100 * (z.serverCPU - a.serverCPU) / secs / float64(n)
	r.WorkerRSSMiB = float64(z.rssBytes) / (1 << 20)
	r.RSSPerSupervisorMiB = r.WorkerRSSMiB / float64(n)
	r.WorkerAnonMiB = float64(z.anonBytes) / (1 << 20)
	r.HeapInuseMiB = z.goMem["go_memstats_heap_inuse_bytes"] / (1 << 20)
	r.HeapGoalMiB = z.goMem["go_memstats_next_gc_bytes"] / (1 << 20)
	r.StackMiB = z.goMem["go_memstats_stack_inuse_bytes"] / (1 << 20)
	r.Goroutines = int(z.goMem["go_goroutines"])
	r.KafkaConnections = z.conns
	r.Handoffs = z.published - a.published
	if a.heartbeats >= 0 && z.heartbeats >= 0 {
		r.HeartbeatsPerGroupDay = float64(z.heartbeats-a.heartbeats) / secs * 86400 / float64(n)
	}
	counts, bounds := histogramDelta(a.gaps, z.gaps)
	var total int64
	for _, c := range counts {
		total += c
	}
	r.ReadGaps = total
	r.ReadGapP50, r.ReadGapP95 = bucketQuantile(counts, bounds, 0.5), bucketQuantile(counts, bounds, 0.95)
	for i, b := range bounds {
		if b > 1 {
			r.ReadGapOver1 += counts[i]
		}
	}
}

// countHistory counts the history events the supervisors and their
// groups wrote in the window [from, to), every run of each (across
// continue-as-new), per handoff and per supervisor and day.
func (r *manyResult) countHistory(ctx context.Context, tc client.Client, specs []domain.Spec, from, to time.Time) error {
	for _, spec := range specs {
		runs, _, err := listRuns(ctx, tc, spec.ID)
		if err != nil {
			return err
		}
		for _, run := range runs {
			it := tc.GetWorkflowHistory(ctx, run.workflowID, run.runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				e, err := it.Next()
				if err != nil {
					return fmt.Errorf("history of %s: %w", run.workflowID, err)
				}
				if at := e.GetEventTime().AsTime(); at.Before(from) || !at.Before(to) {
					continue
				}
				r.History++
				who := "group"
				if !isGroupWorkflow(run.workflowID) {
					r.SupervisorHistory++
					who = "supervisor"
				}
				if r.ByType == nil {
					r.ByType = map[string]int64{}
				}
				r.ByType[who+" "+eventName(e)]++
			}
		}
	}
	if r.Handoffs > 0 {
		r.HistoryPerHandoff = float64(r.History) / float64(r.Handoffs)
	}
	r.HistoryPerSupervisorDay = float64(r.History) / float64(len(specs)) / to.Sub(from).Seconds() * 86400
	return nil
}

// eventName names a history event by its type, and a signal or a signal
// sent by its name.
func eventName(e *historypb.HistoryEvent) string {
	name := strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
	if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
		name += " " + a.GetSignalName()
	}
	if a := e.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a != nil {
		name += " " + a.GetSignalName()
	}
	if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
		name += " " + a.GetActivityType().GetName()
	}
	return strings.ToLower(name)
}

// scrapeHistogram reads one histogram (summed over its labels) from a
// Prometheus endpoint; nil when none is there yet.
func scrapeHistogram(ctx context.Context, url, name string) (*dto.Histogram, error) {
	fams, err := scrapeFamilies(ctx, url)
	if err != nil {
		return nil, err
	}
	f, ok := fams[name]
	if !ok {
		return nil, nil
	}
	sum := &dto.Histogram{}
	for _, m := range f.GetMetric() {
		h := m.GetHistogram()
		if len(sum.Bucket) == 0 {
			for _, b := range h.GetBucket() {
				sum.Bucket = append(sum.Bucket, &dto.Bucket{UpperBound: b.UpperBound, CumulativeCount: new(uint64)})
			}
		}
		for i, b := range h.GetBucket() {
			*sum.Bucket[i].CumulativeCount += b.GetCumulativeCount()
		}
		c := sum.GetSampleCount() + h.GetSampleCount()
		sum.SampleCount = &c
	}
	return sum, nil
}

// goMemGauges are the Go runtime's memory gauges the phase reports.
var goMemGauges = []string{"go_memstats_heap_inuse_bytes", "go_memstats_next_gc_bytes", "go_memstats_stack_inuse_bytes", "go_goroutines"}

// scrapeGauges reads unlabelled gauges from a Prometheus endpoint; one
// that is not there is an error.
func scrapeGauges(ctx context.Context, url string, names ...string) (map[string]float64, error) {
	fams, err := scrapeFamilies(ctx, url)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(names))
	for _, n := range names {
		f, ok := fams[n]
		if !ok || len(f.GetMetric()) == 0 {
			return nil, fmt.Errorf("worker metrics: no %s", n)
		}
		out[n] = f.GetMetric()[0].GetGauge().GetValue()
	}
	return out, nil
}

// scrapeFamilies reads a Prometheus endpoint's text exposition.
func scrapeFamilies(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	return fams, nil
}

// histogramDelta is z minus a, bucket by bucket (not cumulative), with a
// last bucket for what lies past the largest bound.
func histogramDelta(a, z *dto.Histogram) (counts []int64, bounds []float64) {
	if z == nil {
		return nil, nil
	}
	var prev int64
	for i, b := range z.GetBucket() {
		cum := int64(b.GetCumulativeCount())
		if a != nil && i < len(a.GetBucket()) {
			cum -= int64(a.GetBucket()[i].GetCumulativeCount())
		}
		counts = append(counts, cum-prev)
		bounds = append(bounds, b.GetUpperBound())
		prev = cum
	}
	total := int64(z.GetSampleCount())
	if a != nil {
		total -= int64(a.GetSampleCount())
	}
	counts = append(counts, total-prev)
	bounds = append(bounds, float64(1<<62))
	return counts, bounds
}

// bucketQuantile is the upper bound of the bucket that holds quantile q.
func bucketQuantile(counts []int64, bounds []float64, q float64) float64 {
	var total int64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	want := int64(q*float64(total) + 0.999999)
	var cum int64
	for i, c := range counts {
		if cum += c; cum >= want {
			return bounds[i]
		}
	}
	return bounds[len(bounds)-1]
}

// serverPID finds the Temporal dev server this run started, by the metrics
// port on its command line (0: not found, or not started by this run).
func serverPID(s *stack) int {
	_, port, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(s.metricsURL, "http://"), "/metrics"), ":")
	if !ok {
		return 0
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		for i, a := range args {
			if a == "--metrics-port" && i+1 < len(args) && args[i+1] == port {
				var pid int
				if _, err := fmt.Sscanf(d, "/proc/%d/cmdline", &pid); err == nil {
					return pid
				}
			}
		}
	}
	return 0
}

func printMany(w io.Writer, r manyResult) {
	fmt.Fprintf(w, "\n### Many small topics on one worker\n\n")
	fmt.Fprintf(w, "%d supervisors, one topic of %d partitions each at %.1f events/s, taskCount 1, intermediateHandoffPeriod %s, chunkPeriod %s; window %.0f s from 10 s after all ran (%s %.1f s after the first start).\n\n",
		r.Supervisors, r.Partitions, r.Rate, r.Handoff, r.ChunkPeriod, r.WindowSeconds, map[bool]string{true: "IDLE", false: "RUNNING"}[r.Rate == 0], r.StartSeconds)
	fmt.Fprintf(w, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(w, "| read gaps (between a group's streams) | %d, p50 ≤ %.2f s, p95 ≤ %.2f s, %d over 1 s |\n", r.ReadGaps, r.ReadGapP50, r.ReadGapP95, r.ReadGapOver1)
	fmt.Fprintf(w, "| worker CPU per supervisor | %.3f %% of a core |\n", r.WorkerCPUPerSupervisor)
	fmt.Fprintf(w, "| Temporal server CPU per supervisor | %.3f %% of a core |\n", r.TemporalCPUPerSupervisor)
	fmt.Fprintf(w, "| worker RSS | %.0f MiB (%.2f MiB per supervisor) |\n", r.WorkerRSSMiB, r.RSSPerSupervisorMiB)
	fmt.Fprintf(w, "| worker memory, split | RssAnon %.1f MiB; Go heap in use %.1f MiB (goal %.1f), stacks %.1f MiB, %d goroutines |\n",
		r.WorkerAnonMiB, r.HeapInuseMiB, r.HeapGoalMiB, r.StackMiB, r.Goroutines)
	fmt.Fprintf(w, "| worker connections to the broker | %d |\n", r.KafkaConnections)
	fmt.Fprintf(w, "| handoffs in the window | %d |\n", r.Handoffs)
	fmt.Fprintf(w, "| history in the window | %d events (supervisors %d, groups %d): %.1f per handoff |\n", r.History, r.SupervisorHistory, r.History-r.SupervisorHistory, r.HistoryPerHandoff)
	fmt.Fprintf(w, "| history per supervisor and day | %.0f events |\n", r.HistoryPerSupervisorDay)
	types := slices.SortedFunc(maps.Keys(r.ByType), func(a, b string) int { return cmp.Compare(r.ByType[b], r.ByType[a]) })
	for _, t := range types {
		if r.Handoffs > 0 {
			fmt.Fprintf(w, "| · %s | %.2f per handoff |\n", t, float64(r.ByType[t])/float64(r.Handoffs))
		} else {
			fmt.Fprintf(w, "| · %s | %d |\n", t, r.ByType[t])
		}
	}
	fmt.Fprintf(w, "| heartbeats per group and day | %.0f |\n", r.HeartbeatsPerGroupDay)
	fmt.Fprintf(w, "| exact datasources | %d of %d (%d events) |\n", r.ExactDatasources, r.Supervisors, r.Events)
}
