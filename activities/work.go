package activities

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"handoff/internal/domain"
	"handoff/internal/workload"
)

// heartbeatEvery is how often a running consume or publish heartbeats;
// their heartbeat timeouts (a minute or more) are what detects a stuck or
// dead worker.
const heartbeatEvery = 5 * time.Second

// running is one consume or publish in the tracker, heartbeating its
// progress until it ends.
type running struct {
	h    *workload.Handle
	stop chan struct{}
	wg   sync.WaitGroup
	// log carries the workflow, activity, supervisor, group and sequence
	// on every line.
	log *slog.Logger
}

// heartbeatDetails is what a consume or publish heartbeats: where it is.
type heartbeatDetails struct {
	State   string         `json:"state"`
	Offsets domain.Offsets `json:"offsets,omitempty"`
	Rows    int64          `json:"rows"`
	Bytes   int64          `json:"bytes"`
}

// begin takes a slot of the activity's kind (waiting, listed, while none is
// free or memory pushes back) and heartbeats every heartbeatEvery until end.
func (a *Activities) begin(ctx context.Context, w workload.Work) (*running, error) {
	r := &running{stop: make(chan struct{}), log: a.Log}
	if info := activity.GetInfo(ctx); info.ActivityID != "" {
		w.ID, w.Attempt = info.WorkflowExecution.ID+"/"+info.ActivityID, info.Attempt
		r.log = r.log.With("workflow", info.WorkflowExecution.ID, "activity", info.ActivityType.Name, "attempt", info.Attempt)
	}
	r.log = r.log.With("supervisor", w.Supervisor, "group", w.Group, "sequence", w.Sequence)
	if a.Tracker != nil {
		h, err := a.takeSlot(ctx, w, heartbeatEvery, func() any { return heartbeatDetails{State: workload.StateWaitingForSlot} })
		if err != nil {
			return nil, err
		}
		r.h = h
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, r.details())
			}
		}
	}()
	return r, nil
}

// takeSlot waits for a tracker slot of w's kind, heartbeating details()
// every beatEvery meanwhile: waiting is not being stuck.
func (a *Activities) takeSlot(ctx context.Context, w workload.Work, beatEvery time.Duration, details func() any) (*workload.Handle, error) {
	waitCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(beatEvery)
		defer t.Stop()
		for {
			select {
			case <-waitCtx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, details())
			}
		}
	}()
	h, err := a.Tracker.Begin(ctx, w)
	cancel()
	wg.Wait()
	return h, err
}

func (r *running) details() heartbeatDetails {
	if r.h == nil {
		return heartbeatDetails{}
	}
	w := r.h.Work()
	return heartbeatDetails{State: w.State, Offsets: w.Offsets, Rows: w.Rows, Bytes: w.Bytes}
}

func (r *running) state(s string) {
	if r.h != nil {
		r.h.SetState(s)
	}
}

func (r *running) progress(offsets domain.Offsets, rows, bytes int64) {
	if r.h != nil {
		r.h.Progress(offsets, rows, bytes)
	}
}

// end stops the heartbeats and leaves the tracker; a failure is listed
// among its recent failures.
func (r *running) end(err error) {
	close(r.stop)
	r.wg.Wait()
	if r.h != nil {
		r.h.End(err)
	}
}
