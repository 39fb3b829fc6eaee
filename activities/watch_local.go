package activities

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
)

// A watch describes each of its groups at every look, for whether it runs
// and for its running stream's heartbeat: at a hundred idle supervisors on
// a worker, the worker's largest idle cost. When a group's stream runs in
// this process (the usual case with one worker), the heartbeat is at hand
// (localStreams), and whether the group's run is still open is asked of
// Temporal's visibility for every such run of the process at once
// (runLister): one List call every few seconds instead of a Describe per
// group per look. Anything else — a group whose stream runs elsewhere or
// is between attempts, a retried stream that may wait for the schema
// registry, a run the listing found closed, a listing that failed — is
// described as before, so what a look reports does not change.

// listMaxRuns bounds the run ids of one List call (its query's length).
const listMaxRuns = 200

// runLister answers, for the runs of the streams of this process, which
// are no longer running, from one listing shared by every watch.
type runLister struct {
	mu      sync.Mutex
	at      time.Time       // when the last listing began
	covered map[string]bool // the runs it asked about
	closed  map[string]bool // those it found not running
	err     error
	pending chan struct{} // closed when the listing under way ends
}

// closedRuns says which of runs visibility shows not running, from a
// listing begun at most maxAge ago that covered them; else it lists every
// local stream's run (and runs) anew, once for all the watches asking.
func (a *Activities) closedRuns(ctx context.Context, runs []string, maxAge time.Duration) (map[string]bool, error) {
	l := &a.runs
	for {
		l.mu.Lock()
		if l.pending == nil && time.Since(l.at) <= maxAge && coversAll(l.covered, runs) {
			closed, err := l.closed, l.err
			l.mu.Unlock()
			return closed, err
		}
		if wait := l.pending; wait != nil {
			l.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		l.pending = done
		l.mu.Unlock()

		at := time.Now()
		all := append(a.local.runs(), runs...)
		closed, err := a.listClosed(ctx, all)
		covered := make(map[string]bool, len(all))
		for _, r := range all {
			covered[r] = true
		}
		l.mu.Lock()
		l.at, l.covered, l.closed, l.err, l.pending = at, covered, closed, err, nil
		l.mu.Unlock()
		close(done)
		return closed, err
	}
}

func coversAll(covered map[string]bool, runs []string) bool {
	for _, r := range runs {
		if !covered[r] {
			return false
		}
	}
	return true
}

// listClosed lists which of runs are not running, listMaxRuns at a time.
// A run visibility does not know yet is running: its stream started, so
// it was open then, and its closing would be listed.
func (a *Activities) listClosed(ctx context.Context, runs []string) (map[string]bool, error) {
	closed := map[string]bool{}
	for len(runs) > 0 {
		n := min(len(runs), listMaxRuns)
		quoted := make([]string, n)
		for i, r := range runs[:n] {
			quoted[i] = "'" + strings.ReplaceAll(r, "'", "") + "'"
		}
		runs = runs[n:]
		q := fmt.Sprintf("RunId IN (%s) AND ExecutionStatus != 'Running'", strings.Join(quoted, ","))
		var token []byte
		for {
			page, err := a.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token})
			if err != nil {
				return nil, fmt.Errorf("list closed runs: %w", err)
			}
			for _, e := range page.GetExecutions() {
				closed[e.GetExecution().GetRunId()] = true
			}
			if token = page.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
	}
	return closed, nil
}

// localRunning returns, of ids, the groups whose stream runs in this
// process and whose run the shared listing (no older than every/2) shows
// open, with that stream. A stream retried less than registryGrace ago is
// left out: its group's pending activity may say it waits for the schema
// registry (registryWait), which only a Describe shows.
func (w *watcher) localRunning(ctx context.Context, ids []string, every time.Duration) map[string]*localStream {
	out := map[string]*localStream{}
	var runs []string
	for _, id := range ids {
		ls := w.a.local.get(id)
		if ls == nil || !ls.beaten() || (ls.attempt > 1 && time.Since(ls.started) < registryGrace) {
			continue
		}
		out[id] = ls
		runs = append(runs, ls.runID)
	}
	if len(out) == 0 {
		return out
	}
	closed, err := w.a.closedRuns(ctx, runs, every/2)
	if err != nil {
		return map[string]*localStream{} // describe them all
	}
	for id, ls := range out {
		if closed[ls.runID] {
			delete(out, id)
		}
	}
	return out
}
