package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/autoscale"
	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// The lag-based autoscaler (ioConfig.autoScalerConfig). The watch samples
// lag and, when a full window calls for it and an action is allowed,
// returns a decision; the supervisor checks it against what it knows now
// and acts through the taskCount change users make with `starter update`:
// a new spec, recorded as the autoscaler's with its reason, that applies
// once the groups have published, after which they regroup from the
// committed offsets. No workflow.GetVersion: a run whose spec has no
// autoscaler issues the same commands as before.

// AutoscalerState is the autoscaler's part of the carry.
type AutoscalerState struct {
	// Since is when the autoscaler began (scaleActionStartDelay counts
	// from here).
	Since time.Time `json:"since"`
	// Window is the lag samples as the last watch returned them.
	Window     autoscale.Window `json:"window"`
	LastAction *ScaleAction     `json:"lastAction,omitempty"`
	// Actions counts the actions by direction ("out", "in").
	Actions map[string]int `json:"actions,omitempty"`
}

// ScaleAction is one change of taskCount the autoscaler made.
type ScaleAction struct {
	At        time.Time `json:"at"`
	From      int       `json:"from"`
	To        int       `json:"to"`
	Direction string    `json:"direction"`
	Reason    string    `json:"reason"`
}

// AutoscalerStatus is what status shows of the autoscaler.
type AutoscalerStatus struct {
	TaskCount    int               `json:"taskCount"`
	TaskCountMin int               `json:"taskCountMin"`
	TaskCountMax int               `json:"taskCountMax"`
	LagAggregate string            `json:"lagAggregate"`
	Samples      autoscale.Summary `json:"samples"`
	LastAction   *ScaleAction      `json:"lastAction,omitempty"`
	Actions      map[string]int    `json:"actions,omitempty"`
	// NextActionAllowedAt is the earliest time of the next action.
	NextActionAllowedAt time.Time `json:"nextActionAllowedAt"`
}

// autoscaler is the state of an enabled autoscaler (created when first
// needed), or nil when the spec has none.
func (s *supervisor) autoscaler(ctx workflow.Context) *AutoscalerState {
	if !s.spec.IOConfig.AutoScalerOn() {
		return nil
	}
	if s.c.Autoscaler == nil {
		s.c.Autoscaler = &AutoscalerState{Since: now(ctx)}
	}
	return s.c.Autoscaler
}

func (st *AutoscalerState) allowedAt(c domain.AutoScalerConfig) time.Time {
	var last time.Time
	if st.LastAction != nil {
		last = st.LastAction.At
	}
	return autoscale.AllowedAt(c, st.Since, last)
}

// watchAutoScaler is the watch's autoscaler input, nil when it is off.
func (s *supervisor) watchAutoScaler(ctx workflow.Context) *protocol.WatchAutoScaler {
	st := s.autoscaler(ctx)
	if st == nil {
		return nil
	}
	c := *s.spec.IOConfig.AutoScalerConfig
	return &protocol.WatchAutoScaler{Config: c, TaskCount: s.spec.IOConfig.TaskCount, AllowedAt: st.allowedAt(c), Window: st.Window}
}

// onLagSamples keeps what a watch returned of the autoscaler and acts on
// its decision.
func (s *supervisor) onLagSamples(ctx workflow.Context, res protocol.WatchResult) {
	st := s.autoscaler(ctx)
	if st == nil {
		return
	}
	if res.LagWindow != nil {
		st.Window = *res.LagWindow
	}
	if res.Scale != nil {
		s.scale(ctx, st, *res.Scale)
	}
}

// scale makes a decision a spec change, unless what the supervisor knows
// now says otherwise: it drains or changes the spec already, the decision
// was made for another task count, or no action is allowed yet.
func (s *supervisor) scale(ctx workflow.Context, st *AutoscalerState, d autoscale.Decision) {
	c := *s.spec.IOConfig.AutoScalerConfig
	switch {
	case s.draining(), d.From != s.spec.IOConfig.TaskCount, d.TaskCount == d.From,
		d.TaskCount < c.TaskCountMin, d.TaskCount > c.TaskCountMax,
		d.Direction == autoscale.Out && d.TaskCount > len(s.c.Partitions),
		now(ctx).Before(st.allowedAt(c)):
		return
	}
	n := s.spec
	n.IOConfig.TaskCount = d.TaskCount
	reason := fmt.Sprintf("scale %s from %d to %d task groups: %s", d.Direction, d.From, d.TaskCount, d.Reason)
	if _, err := s.recordSpecChange(ctx, n, protocol.RecordSpecInput{ChangedBy: protocol.ChangedByAutoscaler, Reason: reason, Direction: d.Direction}); err != nil {
		s.recordError(ctx, "autoscaler: record the spec: "+errorMessage(err))
		return
	}
	workflow.GetLogger(ctx).Info("autoscaler", "action", reason)
	s.c.PendingSpec = &n
	st.LastAction = &ScaleAction{At: now(ctx), From: d.From, To: d.TaskCount, Direction: d.Direction, Reason: d.Reason}
	if st.Actions == nil {
		st.Actions = map[string]int{}
	}
	st.Actions[d.Direction]++
	st.Window = autoscale.Window{} // the next action judges the new task count's lag
	s.poke()
}

// autoscalerStatus is the autoscaler's part of status, nil when it is off.
func (s *supervisor) autoscalerStatus() *AutoscalerStatus {
	st := s.c.Autoscaler
	if !s.spec.IOConfig.AutoScalerOn() || st == nil {
		return nil
	}
	c := *s.spec.IOConfig.AutoScalerConfig
	return &AutoscalerStatus{
		TaskCount: s.spec.IOConfig.TaskCount, TaskCountMin: c.TaskCountMin, TaskCountMax: c.TaskCountMax,
		LagAggregate: c.LagAggregate, Samples: autoscale.Summarize(c, st.Window),
		LastAction: st.LastAction, Actions: st.Actions, NextActionAllowedAt: st.allowedAt(c),
	}
}

// String is the autoscaler's line in the UI's details and starter status.
func (a *AutoscalerStatus) String() string {
	line := fmt.Sprintf("autoscaler: %d task groups (%d to %d) · lag samples (%s) %d of %d, latest %d, max %d, %d above scale-out, %d below scale-in",
		a.TaskCount, a.TaskCountMin, a.TaskCountMax, a.LagAggregate, a.Samples.Samples, a.Samples.Capacity,
		a.Samples.Latest, a.Samples.Max, a.Samples.AboveOut, a.Samples.BelowIn)
	if l := a.LastAction; l != nil {
		line += fmt.Sprintf(" · last action %s: scale %s %d → %d, %s", l.At.UTC().Format(time.RFC3339), l.Direction, l.From, l.To, l.Reason)
	}
	return line + " · next action allowed at " + a.NextActionAllowedAt.UTC().Format(time.RFC3339)
}
