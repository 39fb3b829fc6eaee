package main

import (
	"cmp"
	"slices"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
)

// localActivityMarker is the marker name the Go SDK records for a local
// activity's result.
const localActivityMarker = "LocalActivity"

// historyCounts is what a set of workflow runs' histories hold, split the
// way the orchestration phase reports it. Histories only grow, so the
// counts of a later look minus those of an earlier one are what was
// written in between, across continue-as-new as long as both looks see
// every run.
type historyCounts struct {
	Runs       int
	Supervisor int64 // events of the supervisor's runs
	Groups     int64 // events of the task groups' runs
	// ActivitiesScheduled counts ActivityTaskScheduled events: activity
	// starts, retries aside (a retry writes no new event).
	ActivitiesScheduled int64
	// LocalActivities counts local-activity markers.
	LocalActivities int64
	ByActivity      map[string]int64 // ActivityTaskScheduled by activity type
}

// add counts one event of workflow id's history.
func (h *historyCounts) add(workflowID string, e *history.HistoryEvent) {
	if isGroupWorkflow(workflowID) {
		h.Groups++
	} else {
		h.Supervisor++
	}
	switch e.GetEventType() {
	case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		h.ActivitiesScheduled++
		if h.ByActivity == nil {
			h.ByActivity = map[string]int64{}
		}
		h.ByActivity[e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()]++
	case enums.EVENT_TYPE_MARKER_RECORDED:
		if e.GetMarkerRecordedEventAttributes().GetMarkerName() == localActivityMarker {
			h.LocalActivities++
		}
	}
}

// isGroupWorkflow: group ids are the supervisor's id, a slash and more
// (supervisor/<id>/group-<n>); a supervisor id holds no slash of its own.
func isGroupWorkflow(id string) bool { return strings.Count(id, "/") >= 2 }

func (h historyCounts) Total() int64 { return h.Supervisor + h.Groups }

// minus is what h holds beyond an earlier look b.
func (h historyCounts) minus(b historyCounts) historyCounts {
	d := historyCounts{
		Runs: h.Runs, Supervisor: h.Supervisor - b.Supervisor, Groups: h.Groups - b.Groups,
		ActivitiesScheduled: h.ActivitiesScheduled - b.ActivitiesScheduled,
		LocalActivities:     h.LocalActivities - b.LocalActivities,
	}
	for t, n := range h.ByActivity {
		if n -= b.ByActivity[t]; n != 0 {
			if d.ByActivity == nil {
				d.ByActivity = map[string]int64{}
			}
			d.ByActivity[t] = n
		}
	}
	return d
}

// activityCount is how many activities of one type were scheduled.
type activityCount struct {
	Type  string `json:"type"`
	Count int64  `json:"count"`
}

// activityCounts lists m most frequent first (ties by name).
func activityCounts(m map[string]int64) []activityCount {
	out := make([]activityCount, 0, len(m))
	for t, n := range m {
		out = append(out, activityCount{t, n})
	}
	slices.SortFunc(out, func(a, b activityCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Type, b.Type))
	})
	return out
}
