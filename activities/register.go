package activities

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"handoff/internal/protocol"
)

// Register registers every activity under its protocol name.
func (a *Activities) Register(r worker.ActivityRegistry) {
	for name, fn := range map[string]any{
		protocol.ActivityDiscover:        a.Discover,
		protocol.ActivityStartOffsets:    a.StartOffsets,
		protocol.ActivityConsume:         a.Consume,
		protocol.ActivityPublish:         a.Publish,
		protocol.ActivityGroupStates:     a.GroupStates,
		protocol.ActivityResetOffsets:    a.ResetOffsets,
		protocol.ActivityRecordSpec:      a.RecordSpec,
		protocol.ActivityTerminateGroups: a.TerminateGroups,
		protocol.ActivityConsumeStream:   a.ConsumeStream,
		protocol.ActivityWakeConsume:     a.WakeConsume,
		protocol.ActivityWatch:           a.Watch,
		protocol.ActivityCompactionPlan:  a.CompactionPlan,
		protocol.ActivityCompactInterval: a.CompactInterval,
		protocol.ActivityApplyRetention:  a.ApplyRetention,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}
