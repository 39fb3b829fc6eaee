package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	common "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"

	"handoff/internal/domain"
)

func TestParsePhasesAndOrchestrationFlags(t *testing.T) {
	o, err := parseOptions(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"backlog", "handoff", "orchestration", "failover", "compaction"}, o.phases)
	o, err = parseOptions(strings.Fields("-phases tablegrowth"))
	require.NoError(t, err)
	require.Equal(t, []string{"tablegrowth"}, o.phases)
	o, err = parseOptions(nil)
	require.NoError(t, err)
	require.Equal(t, 2*time.Minute, o.idle)
	require.Equal(t, 2*time.Minute, o.steady)
	require.Equal(t, 200.0, o.steadyRate)

	o, err = parseOptions(strings.Fields("-phases orchestration,orchestration -idle 30s -steady 0"))
	require.NoError(t, err)
	require.Equal(t, []string{"orchestration"}, o.phases)
	require.Equal(t, 30*time.Second, o.idle)
	require.Zero(t, o.steady)
	for args, want := range map[string]string{
		"-phases backlog,sideways":  `unknown phase "sideways"`,
		"-phases ,":                 "at least one",
		"-idle -1s":                 "none negative",
		"-steady 1m -steady-rate 0": "positive rate",
		"-steady-checkpoints -2":    "none negative",
	} {
		_, err := parseOptions(strings.Fields(args))
		require.ErrorContains(t, err, want, args)
	}
}

// Only the frontend's heartbeat requests of the namespace count, whatever
// the order of their labels; comments and other series do not.
func TestCounterSum(t *testing.T) {
	text := `# HELP service_requests service_requests counter
# TYPE service_requests counter
service_requests{namespace="default",operation="RecordActivityTaskHeartbeat",service_name="frontend"} 12
service_requests{namespace="default",operation="RecordActivityTaskHeartbeat",service_name="history"} 12
service_requests{service_name="frontend",operation="RecordActivityTaskHeartbeatById",namespace="default"} 3 1733230000000
service_requests{namespace="other",operation="RecordActivityTaskHeartbeat",service_name="frontend"} 100
service_requests{namespace="default",operation="PollActivityTaskQueue",service_name="frontend"} 7
service_requests_total{namespace="default",operation="RecordActivityTaskHeartbeat",service_name="frontend"} 50
`
	want := func(op string) map[string]string {
		return map[string]string{"namespace": "default", "operation": op, "service_name": "frontend"}
	}
	require.Equal(t, 12.0, counterSum(text, "service_requests", want("RecordActivityTaskHeartbeat")))
	require.Equal(t, 3.0, counterSum(text, "service_requests", want("RecordActivityTaskHeartbeatById")))
	require.Equal(t, 0.0, counterSum(text, "service_requests", want("RespondActivityTaskCompleted")))
	require.Equal(t, 7.0+12+3, counterSum(text, "service_requests", map[string]string{"namespace": "default", "service_name": "frontend"}))
}

func TestParseSample(t *testing.T) {
	name, labels, v, ok := parseSample(`up{job="a \"b\"\\c",x="1"} 2.5`)
	require.True(t, ok)
	require.Equal(t, "up", name)
	require.Equal(t, map[string]string{"job": `a "b"\c`, "x": "1"}, labels)
	require.Equal(t, 2.5, v)
	name, labels, v, ok = parseSample(`plain 4`)
	require.True(t, ok)
	require.Equal(t, "plain", name)
	require.Empty(t, labels)
	require.Equal(t, 4.0, v)
	for _, bad := range []string{"", "# TYPE x counter", "x", `x{a="1} 2`, `x{a=1} 2`, "x{} y"} {
		_, _, _, ok := parseSample(bad)
		require.False(t, ok, bad)
	}
}

func scheduled(activity string) *history.HistoryEvent {
	return &history.HistoryEvent{
		EventType: enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
		Attributes: &history.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &history.ActivityTaskScheduledEventAttributes{
			ActivityType: &common.ActivityType{Name: activity},
		}},
	}
}

func marker(name string) *history.HistoryEvent {
	return &history.HistoryEvent{
		EventType: enums.EVENT_TYPE_MARKER_RECORDED,
		Attributes: &history.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &history.MarkerRecordedEventAttributes{
			MarkerName: name,
		}},
	}
}

// A later look minus an earlier one is what was written in between: by
// supervisor and groups, activities by type, local activities apart from
// other markers.
func TestHistoryCounts(t *testing.T) {
	const sup, g0 = "supervisor/wiki", "supervisor/wiki/group-0"
	task := &history.HistoryEvent{EventType: enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED}
	var a historyCounts
	a.add(sup, task)
	a.add(sup, scheduled("Watch"))
	a.add(g0, scheduled("ConsumeStream"))
	b := a
	b.ByActivity = map[string]int64{}
	for k, v := range a.ByActivity {
		b.ByActivity[k] = v
	}
	b.add(g0, marker(localActivityMarker))
	b.add(g0, marker("Version"))
	b.add(g0, scheduled("ConsumeStream"))
	b.add(g0, scheduled("Publish"))
	b.add(sup, task)
	b.Runs = 4

	require.Equal(t, int64(3), a.Total())
	d := b.minus(a)
	require.Equal(t, historyCounts{
		Runs: 4, Supervisor: 1, Groups: 4, ActivitiesScheduled: 2, LocalActivities: 1,
		ByActivity: map[string]int64{"ConsumeStream": 1, "Publish": 1},
	}, d)
	require.Equal(t, []activityCount{{"ConsumeStream", 1}, {"Publish", 1}}, activityCounts(d.ByActivity))
	require.Equal(t, []activityCount{{"Consume", 9}, {"Discover", 1}, {"GroupStates", 1}},
		activityCounts(map[string]int64{"GroupStates": 1, "Consume": 9, "Discover": 1}))
	require.True(t, isGroupWorkflow(g0))
	require.False(t, isGroupWorkflow(sup))
}

// A 90-second window of the old design's idle cost (the count:
// 96 supervisor and 2 × 544 group events) extrapolates to its per-day
// figure; per million needs events.
func TestNewWindowExtrapolates(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	a := snapshot{at: t0, heartbeats: 10, ends: domain.Offsets{domain.P(0): 5, domain.P(1): 5},
		history: historyCounts{Supervisor: 100, Groups: 1000, ActivitiesScheduled: 40}}
	b := snapshot{at: t0.Add(90 * time.Second), heartbeats: 19, ends: domain.Offsets{domain.P(0): 5, domain.P(1): 5},
		history: historyCounts{Runs: 3, Supervisor: 196, Groups: 2088, ActivitiesScheduled: 220, LocalActivities: 3}}
	w := newWindow("spec", 0, a, b)
	require.Equal(t, int64(1184), w.HistoryEvents)
	require.InDelta(t, 1_136_640, w.HistoryPerDay, 0.01)
	require.InDelta(t, 92_160, w.SupervisorPerDay, 0.01)
	require.InDelta(t, 180*960, w.ActivitiesPerDay, 0.01)
	require.InDelta(t, 3*960, w.LocalActivitiesPerDay, 0.01)
	require.Equal(t, int64(9), *w.Heartbeats)
	require.InDelta(t, 9*960, *w.HeartbeatsPerDay, 0.01)
	require.Zero(t, w.Events)
	require.Zero(t, w.HistoryPerM)

	b.ends = domain.Offsets{domain.P(0): 9005, domain.P(1): 9005} // 200 events/s for 90 s
	b.heartbeats = -1
	w = newWindow("spec", 200, a, b)
	require.Equal(t, int64(18000), w.Events)
	require.InDelta(t, 1184.0/18000*1e6, w.HistoryPerM, 0.01)
	require.Nil(t, w.Heartbeats)
	require.Nil(t, w.HeartbeatsPerDay)
}

// A handoff's cost is what its window wrote beyond the steady rate, per
// published sequence.
func TestNewHandoffCost(t *testing.T) {
	steady := orchestrationWindow{WindowSeconds: 120, HistoryEvents: 240, ActivitiesScheduled: 12}
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	a := snapshot{at: t0, history: historyCounts{Supervisor: 1000, Groups: 1000, ActivitiesScheduled: 50}}
	b := snapshot{at: t0.Add(30 * time.Second), history: historyCounts{Supervisor: 1100, Groups: 1960, ActivitiesScheduled: 93, LocalActivities: 40}}
	c := newHandoffCost(20, 40, steady, a, b)
	require.Equal(t, int64(1060), c.HistoryEvents)
	require.InDelta(t, 60, c.Baseline, 1e-9)
	require.InDelta(t, 25, c.HistoryPerHandoff, 1e-9)   // (1060 - 60) / 40
	require.InDelta(t, 1, c.ActivitiesPerHandoff, 1e-9) // (43 - 3) / 40
	require.InDelta(t, 1, c.LocalPerHandoff, 1e-9)
	require.Zero(t, newHandoffCost(20, 0, steady, a, b).HistoryPerHandoff)
}

func TestCheckTargets(t *testing.T) {
	hb := func(v float64) *float64 { return &v }
	r := orchestrationResult{
		Idle:    &orchestrationWindow{HistoryPerDay: 1999, HeartbeatsPerDay: hb(5001)},
		Steady:  &orchestrationWindow{Rate: 200, Events: 24000, HistoryPerM: 3000},
		Latency: &handoffResult{Rate: 200, Samples: 40, P50Millis: 1000, P95Millis: 3001},
	}
	var verdicts []string
	for _, c := range checkTargets(r) {
		verdicts = append(verdicts, c.Verdict)
	}
	require.Equal(t, []string{"met", "not met", "met", "not met"}, verdicts)

	r.Idle.HeartbeatsPerDay = nil // an external server without metrics
	r.Steady.Events = 0           // nothing produced: per million means nothing
	c := checkTargets(r)
	require.Equal(t, "unknown", c[1].Verdict)
	require.Equal(t, "unknown", c[1].Measured)
	require.Equal(t, "not met", c[2].Verdict)
	require.Len(t, checkTargets(orchestrationResult{}), 0)
}

// The phases use the dev example under their own names; the steady one
// with the default handoff settings.
func TestOrchestrationSpec(t *testing.T) {
	b, err := os.ReadFile("../examples/wiki.json")
	require.NoError(t, err)
	base, err := domain.ParseSpec(b)
	require.NoError(t, err)
	idle, err := orchestrationSpec(base, "bench-idle", false)
	require.NoError(t, err)
	require.Equal(t, "bench-idle", idle.ID)
	require.Equal(t, "bench_idle", idle.DataSchema.DataSource)
	require.Equal(t, "bench-idle", idle.IOConfig.Topic)
	require.Equal(t, time.Minute, idle.TuningConfig.IntermediateHandoffPeriod.D())
	require.Equal(t, "examples/wiki.json with its own handoff settings (taskCount 2, period 30s, intermediateHandoffPeriod 1m0s, maxRowsPerSegment 5000000, maxTotalRows 20000000)",
		describeSpec("examples/wiki.json", idle, false))

	steady, err := orchestrationSpec(base, "bench-steady", true)
	require.NoError(t, err)
	require.Zero(t, steady.TuningConfig.IntermediateHandoffPeriod)
	require.Equal(t, int64(domain.DefaultMaxRowsPerSegment), steady.TuningConfig.MaxRowsPerSegment)
	require.Equal(t, "wiki", base.ID, "the base spec is not changed")
	require.Contains(t, describeSpec("examples/wiki.json", steady, true), "the default handoff settings (taskCount 2, period 30s, intermediateHandoffPeriod none")
}
