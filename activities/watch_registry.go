package activities

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// registryGrace: an attempt that has run this long since a schema-registry
// failure is taken to have its schemas. A failing attempt fails sooner:
// the registry client gives up within about 16 s (internal/registry).
const registryGrace = 30 * time.Second

// registryWait says why a group's read waits for the schema registry, ""
// when it does not: its consume's last attempt failed with
// ErrSchemaRegistryUnavailable and the next one is waiting to start, or
// started less than registryGrace ago.
func registryWait(pa *workflowpb.PendingActivityInfo, now time.Time) string {
	switch pa.GetActivityType().GetName() {
	case protocol.ActivityConsume, protocol.ActivityConsumeStream:
	default:
		return ""
	}
	f := pa.GetLastFailure()
	if f.GetApplicationFailureInfo().GetType() != domain.ErrSchemaRegistryUnavailable {
		return ""
	}
	if pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED && pa.GetLastStartedTime() != nil &&
		now.Sub(pa.GetLastStartedTime().AsTime()) >= registryGrace {
		return ""
	}
	return f.GetMessage()
}

// seeRegistry records in the view (and the worker's metrics) whether the
// supervisor's groups wait for the registry.
func (w *watcher) seeRegistry(res *protocol.WatchResult, why string) {
	res.View.Registry = why
	if w.a.Metrics != nil {
		w.a.Metrics.SchemaRegistryUnavailable(w.in.SupervisorID, why != "")
	}
}
