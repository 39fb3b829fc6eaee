package main

import (
	"context"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
	"handoff/workflows"
)

const day = 24 * time.Hour

// snapshot is one look at what a supervisor has cost so far.
type snapshot struct {
	at      time.Time
	history historyCounts
	// heartbeats the server's frontend has served, all workflows; -1:
	// unknown (a server without a metrics endpoint).
	heartbeats int64
	ends       domain.Offsets // the topic's end offsets: events produced
}

// orchestrationWindow is what one stretch of a phase cost, and that
// extrapolated to a day and to a million events.
type orchestrationWindow struct {
	Spec          string  `json:"spec"`
	Rate          float64 `json:"eventsPerSecond"` // of the producer; 0 idle
	WindowSeconds float64 `json:"windowSeconds"`
	Events        int64   `json:"events"` // produced to the topic in the window
	Runs          int     `json:"workflowRuns"`
	// History events written in the window: the supervisor's runs, the
	// groups' runs, both.
	SupervisorEvents    int64           `json:"supervisorHistoryEvents"`
	GroupEvents         int64           `json:"groupHistoryEvents"`
	HistoryEvents       int64           `json:"historyEvents"`
	ActivitiesScheduled int64           `json:"activitiesScheduled"`
	LocalActivities     int64           `json:"localActivities"`
	Activities          []activityCount `json:"activities"`
	Heartbeats          *int64          `json:"heartbeats"` // null: unknown

	SupervisorPerDay      float64  `json:"supervisorHistoryEventsPerDay"`
	GroupsPerDay          float64  `json:"groupHistoryEventsPerDay"`
	HistoryPerDay         float64  `json:"historyEventsPerDay"`
	ActivitiesPerDay      float64  `json:"activitiesScheduledPerDay"`
	LocalActivitiesPerDay float64  `json:"localActivitiesPerDay"`
	HeartbeatsPerDay      *float64 `json:"heartbeatsPerDay"`
	// HistoryPerM is per million events produced; 0 when none were.
	HistoryPerM float64 `json:"historyEventsPerMillionEvents"`
}

// newWindow is what happened between two snapshots.
func newWindow(spec string, rate float64, a, b snapshot) orchestrationWindow {
	h := b.history.minus(a.history)
	secs := b.at.Sub(a.at).Seconds()
	w := orchestrationWindow{
		Spec: spec, Rate: rate, WindowSeconds: secs, Events: b.ends.Sum() - a.ends.Sum(), Runs: b.history.Runs,
		SupervisorEvents: h.Supervisor, GroupEvents: h.Groups, HistoryEvents: h.Total(),
		ActivitiesScheduled: h.ActivitiesScheduled, LocalActivities: h.LocalActivities,
		Activities: activityCounts(h.ByActivity),
	}
	perDay := func(n int64) float64 { return float64(n) * day.Seconds() / secs }
	w.SupervisorPerDay, w.GroupsPerDay, w.HistoryPerDay = perDay(h.Supervisor), perDay(h.Groups), perDay(h.Total())
	w.ActivitiesPerDay, w.LocalActivitiesPerDay = perDay(h.ActivitiesScheduled), perDay(h.LocalActivities)
	if a.heartbeats >= 0 && b.heartbeats >= 0 {
		n := b.heartbeats - a.heartbeats
		d := perDay(n)
		w.Heartbeats, w.HeartbeatsPerDay = &n, &d
	}
	if w.Events > 0 {
		w.HistoryPerM = float64(h.Total()) / float64(w.Events) * 1e6
	}
	return w
}

// handoffCost is what the handoffs of the steady phase added to its
// steady cost, per published sequence.
type handoffCost struct {
	Checkpoints   int     `json:"checkpoints"`
	Sequences     int64   `json:"sequencesPublished"`
	WindowSeconds float64 `json:"windowSeconds"`
	HistoryEvents int64   `json:"historyEvents"` // in the window, all of it
	// Baseline is the steady window's history rate over this window: what
	// it would have written without handoffs.
	Baseline             float64 `json:"baselineHistoryEvents"`
	HistoryPerHandoff    float64 `json:"historyEventsPerHandoff"`
	ActivitiesPerHandoff float64 `json:"activitiesScheduledPerHandoff"`
	LocalPerHandoff      float64 `json:"localActivitiesPerHandoff"`
}

// newHandoffCost nets the steady rate out of the handoff window a..b, in
// which sequences were published.
func newHandoffCost(checkpoints int, sequences int64, steady orchestrationWindow, a, b snapshot) handoffCost {
	h := b.history.minus(a.history)
	secs := b.at.Sub(a.at).Seconds()
	c := handoffCost{Checkpoints: checkpoints, Sequences: sequences, WindowSeconds: secs, HistoryEvents: h.Total()}
	if steady.WindowSeconds <= 0 || sequences <= 0 {
		return c
	}
	scale := secs / steady.WindowSeconds
	c.Baseline = float64(steady.HistoryEvents) * scale
	per := func(n int64, base int64) float64 {
		return (float64(n) - float64(base)*scale) / float64(sequences)
	}
	c.HistoryPerHandoff = per(h.Total(), steady.HistoryEvents)
	c.ActivitiesPerHandoff = per(h.ActivitiesScheduled, steady.ActivitiesScheduled)
	c.LocalPerHandoff = per(h.LocalActivities, steady.LocalActivities)
	return c
}

// takeSnapshot looks at the histories of supervisor id and its groups,
// the server's heartbeat counter and the topic's end offsets.
func takeSnapshot(ctx context.Context, s *stack, tc client.Client, spec domain.Spec, partitions int) (snapshot, error) {
	snap := snapshot{at: time.Now(), heartbeats: -1}
	if s.metricsURL != "" {
		n, err := serverHeartbeats(ctx, s.metricsURL, s.namespace)
		if err != nil {
			return snap, err
		}
		snap.heartbeats = n
	}
	runs, err := allRuns(ctx, tc, spec)
	if err != nil {
		return snap, err
	}
	if snap.history, err = countRuns(ctx, tc, runs); err != nil {
		return snap, err
	}
	snap.ends, err = topicEnds(ctx, s.brokers, spec.IOConfig.Topic, partitions)
	return snap, err
}

// allRuns is listRuns plus the current run of the supervisor and of each
// group, which visibility may not list yet when it has just started.
func allRuns(ctx context.Context, tc client.Client, spec domain.Spec) ([]runRef, error) {
	runs, _, err := listRuns(ctx, tc, spec.ID)
	if err != nil {
		return nil, err
	}
	seen := map[runRef]bool{}
	for _, r := range runs {
		seen[r] = true
	}
	ids := []string{workflows.SupervisorWorkflowID(spec.ID)}
	for g := range spec.IOConfig.TaskCount {
		ids = append(ids, workflows.TaskGroupWorkflowID(spec.ID, g))
	}
	for _, id := range ids {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		d, err := tc.DescribeWorkflowExecution(dctx, id, "")
		cancel()
		if err != nil {
			continue // not started (yet)
		}
		r := runRef{id, d.GetWorkflowExecutionInfo().GetExecution().GetRunId()}
		if !seen[r] {
			seen[r] = true
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// topicEnds returns the end offset of each partition of topic.
func topicEnds(ctx context.Context, brokers []string, topic string, partitions int) (domain.Offsets, error) {
	c := &kafkago.Client{Addr: kafkago.TCP(brokers...), Timeout: 30 * time.Second}
	reqs := make([]kafkago.OffsetRequest, partitions)
	for p := range partitions {
		reqs[p] = kafkago.LastOffsetOf(p)
	}
	res, err := c.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	out := domain.Offsets{}
	for _, po := range res.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("end offset of %s[%d]: %w", topic, po.Partition, po.Error)
		}
		out[domain.P(int32(po.Partition))] = po.LastOffset
	}
	return out, nil
}

// targetCheck is one of issue 14's targets against what was measured.
type targetCheck struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Verdict  string `json:"verdict"` // met, not met, unknown
}

// checkTargets holds the orchestration phase to issue 14's targets.
func checkTargets(r orchestrationResult) []targetCheck {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	var out []targetCheck
	if w := r.Idle; w != nil {
		out = append(out, targetCheck{"idle: ≤ 2,000 history events per day, supervisor and groups",
			fmt.Sprintf("%.0f", w.HistoryPerDay), verdict(w.HistoryPerDay <= 2000)})
		hb := targetCheck{Target: "idle: ≤ 5,000 heartbeats reaching the server per day", Measured: "unknown", Verdict: "unknown"}
		if w.HeartbeatsPerDay != nil {
			hb.Measured, hb.Verdict = fmt.Sprintf("%.0f", *w.HeartbeatsPerDay), verdict(*w.HeartbeatsPerDay <= 5000)
		}
		out = append(out, hb)
	}
	if w := r.Steady; w != nil {
		out = append(out, targetCheck{fmt.Sprintf("%.0f events/s: ≤ 3,000 history events per million events", w.Rate),
			fmt.Sprintf("%.0f", w.HistoryPerM), verdict(w.Events > 0 && w.HistoryPerM <= 3000)})
	}
	if h := r.Latency; h != nil && h.Samples > 0 {
		out = append(out, targetCheck{fmt.Sprintf("%.0f events/s: handoff latency p50 ≤ 1 s, p95 ≤ 3 s", h.Rate),
			fmt.Sprintf("p50 %.0f ms, p95 %.0f ms", h.P50Millis, h.P95Millis), verdict(h.P50Millis <= 1000 && h.P95Millis <= 3000)})
	}
	return out
}
