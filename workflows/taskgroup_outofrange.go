package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// reportOutOfRange tells the supervisor, before the group fails, that a
// consume failed on an offset its partition no longer holds: the
// supervisor resets the partition (resetOffsetAutomatically) or records
// what to run. The group does not skip by itself: moving the stored
// offsets is the supervisor's reset (supervisor_outofrange.go says why).
func (g *taskGroup) reportOutOfRange(ctx workflow.Context, err error) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != domain.ErrOffsetOutOfRange || !app.HasDetails() {
		return
	}
	var o domain.OutOfRange
	if app.Details(&o) != nil {
		return
	}
	if workflow.GetVersion(ctx, outOfRangeChange, workflow.DefaultVersion, outOfRangeVersion) < outOfRangeVersion {
		return
	}
	g.signalSupervisor(ctx, SignalOffsetOutOfRange, OffsetOutOfRangeReport{Group: g.in.Group, Generation: g.in.Generation, OutOfRange: o})
	g.flushSignals(ctx) // the run fails next: deliver it first
}
