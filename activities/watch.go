package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/lagview"
	"handoff/internal/protocol"
)

// watchHeartbeatEvery: a watch holds nothing a retry needs, so it only
// heartbeats for its heartbeat timeout (workflows/options.go).
const watchHeartbeatEvery = 2 * time.Minute

// Watch looks at a supervisor's world every in.Every — its topic's
// partitions and latest offsets, whether each of its groups runs and how far
// their running consumes have read — and returns only once what it sees
// differs from what the supervisor knows (in.Known), or after in.MaxRun.
// That is the supervisor's whole periodic work, and a quiet supervisor
// writes no history for it. Kafka errors are part of what it sees, not
// failures of the activity.
func (a *Activities) Watch(ctx context.Context, in protocol.WatchInput) (protocol.WatchResult, error) {
	every := lookEvery(in)
	started, lastBeat := time.Now(), time.Now()
	workerStop := activity.GetWorkerStopChannel(ctx)
	w := newWatcher(a, in)
	if in.FirstLookAfter > 0 {
		select {
		case <-ctx.Done():
			return protocol.WatchResult{}, ctx.Err()
		case <-time.After(in.FirstLookAfter):
		}
	}
	for {
		res, err := w.look(ctx)
		if err != nil {
			return protocol.WatchResult{}, err
		}
		res.LagWindow = w.lagWindow()
		if res.Scale != nil {
			res.Reason = "autoscale " + res.Scale.Direction + ": " + res.Scale.Reason
			return res, nil
		}
		if reason := changed(in.Known, res.View); reason != "" {
			res.Reason = reason
			return res, nil
		}
		if in.MaxRun > 0 && time.Since(started) >= in.MaxRun {
			res.Reason = "max-run"
			return res, nil
		}
		if time.Since(lastBeat) >= watchHeartbeatEvery {
			activity.RecordHeartbeat(ctx, res.Reason)
			lastBeat = time.Now()
		}
		select {
		case <-ctx.Done():
			return protocol.WatchResult{}, ctx.Err()
		case <-workerStop:
			res.Reason = "worker-stop"
			return res, nil
		case <-time.After(every):
		}
	}
}

// watcher carries what one look needs from the previous ones.
type watcher struct {
	a          *Activities
	in         protocol.WatchInput
	connected  bool
	prevLatest domain.Offsets
	caughtUp   int       // looks in a row with everything read and nothing new
	judgedAt   time.Time // when the autoscaler's window was last judged
}

func newWatcher(a *Activities, in protocol.WatchInput) *watcher {
	w := &watcher{a: a, in: in}
	if in.Known.CaughtUp {
		w.caughtUp = 2 // stays caught up until a look shows otherwise
	}
	return w
}

// see counts a look at latest and current offsets towards being caught up
// and says whether the view is.
func (w *watcher) see(latest, current domain.Offsets) bool {
	if w.upToDate(latest, current) {
		w.caughtUp++
	} else {
		w.caughtUp = 0
	}
	w.prevLatest = latest
	return w.caughtUp >= 2
}

func (w *watcher) look(ctx context.Context) (protocol.WatchResult, error) {
	res := protocol.WatchResult{View: protocol.WatchView{Groups: map[string]bool{}}, Closed: map[string]protocol.GroupClosed{}}
	current, err := w.groups(ctx, &res)
	if err != nil {
		return res, err
	}
	res.Current = current
	src := source{topic: w.in.Topic, pattern: w.in.TopicPattern}
	parts, _, latest, err := w.a.partitions(ctx, src)
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.View.Problem = err.Error()
		if errors.Is(err, kafka.ErrTopicNotFound) {
			res.View.ProblemType = domain.ErrTopicNotFound
		}
		res.View.Partitions = slices.Clone(w.in.Known.Partitions)
		res.View.CaughtUp = w.in.Known.CaughtUp
		res.Connected = w.connected
		w.caughtUp = 0
		return res, nil
	}
	w.connected = true
	res.Connected = true
	res.View.Partitions = parts
	res.Latest = latest
	res.View.CaughtUp = w.see(latest, current)
	if w.a.Metrics != nil || w.in.AutoScaler != nil {
		in := lagview.Input{Current: current, Latest: latest, LatestAt: time.Now()}
		if w.a.Store != nil && w.in.DataSource != "" {
			if committed, err := w.a.committed(ctx, w.in.DataSource, src, parts); err == nil {
				in.Committed = lagview.Base(committed, w.in.Starts)
			}
		}
		if w.a.Metrics != nil {
			w.a.Metrics.Offsets(w.in.SupervisorID, in)
		}
		res.Scale = w.sampleLag(in.LatestAt, in, len(parts))
	}
	return res, nil
}

// upToDate: every partition read to its latest offset, which did not move
// since the previous look (if there was one in this watch).
func (w *watcher) upToDate(latest, current domain.Offsets) bool {
	if len(latest) == 0 {
		return false
	}
	for p, l := range latest {
		if c, ok := current[p]; !ok || c < l {
			return false
		}
		if w.prevLatest != nil && w.prevLatest[p] != l {
			return false
		}
	}
	return true
}

// groups describes every group the supervisor knows of: whether it runs,
// how a run that was known to run ended, and the read positions its
// running consume heartbeats (from the stream itself when it runs here
// and its run is listed open: watch_local.go).
func (w *watcher) groups(ctx context.Context, res *protocol.WatchResult) (domain.Offsets, error) {
	current := domain.Offsets{}
	registry := ""
	defer func() { w.seeRegistry(res, registry) }()
	ids := make([]string, 0, len(w.in.Known.Groups))
	for id := range w.in.Known.Groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	local := w.localRunning(ctx, ids, lookEvery(w.in))
	for _, id := range ids {
		if ls := local[id]; ls != nil {
			res.View.Groups[id] = true
			offsets, held := ls.last()
			for p, o := range offsets {
				current[p] = max(current[p], o)
			}
			res.View.Held = append(res.View.Held, lastingHolds(held, time.Now(), cmp.Or(w.a.HeldReportAfter, DefaultHeldReportAfter))...)
			continue
		}
		w.a.describes.Add(1)
		d, err := w.a.Temporal.DescribeWorkflowExecution(ctx, id, "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			res.View.Groups[id] = false
			if w.in.Known.Groups[id] {
				res.Closed[id] = protocol.GroupClosed{Status: "NotFound"}
			}
			continue
		case err != nil:
			return nil, fmt.Errorf("describe workflow %s: %w", id, err)
		}
		info := d.GetWorkflowExecutionInfo()
		running := open(info.GetStatus())
		res.View.Groups[id] = running
		if !running && w.in.Known.Groups[id] {
			closed := protocol.GroupClosed{Status: info.GetStatus().String()}
			if closed.Status == "Failed" {
				if closed.Failure, err = w.a.failure(ctx, id, info.GetExecution().GetRunId()); err != nil {
					return nil, err
				}
			}
			res.Closed[id] = closed
		}
		for _, pa := range d.GetPendingActivities() {
			if why := registryWait(pa, time.Now()); why != "" {
				registry = why
			}
			var beat struct {
				Offsets domain.Offsets         `json:"offsets"`
				Held    []domain.HeldPartition `json:"held"`
			}
			if pa.GetHeartbeatDetails() == nil {
				continue
			}
			if converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &beat) != nil {
				continue
			}
			for p, o := range beat.Offsets {
				current[p] = max(current[p], o)
			}
			res.View.Held = append(res.View.Held, lastingHolds(beat.Held, time.Now(), cmp.Or(w.a.HeldReportAfter, DefaultHeldReportAfter))...)
		}
	}
	return current, nil
}

// changed says what differs between the known view and the seen one, ""
// when nothing does.
func changed(known, seen protocol.WatchView) string {
	if (known.Problem == "") != (seen.Problem == "") || known.ProblemType != seen.ProblemType {
		if seen.Problem != "" {
			return "problem: " + seen.Problem
		}
		return "problem resolved"
	}
	a, b := slices.Clone(known.Partitions), slices.Clone(seen.Partitions)
	slices.SortFunc(a, domain.ComparePartitions)
	slices.SortFunc(b, domain.ComparePartitions)
	if !slices.Equal(a, b) {
		return fmt.Sprintf("partitions %v", b)
	}
	for id, running := range known.Groups {
		if seen.Groups[id] != running {
			return fmt.Sprintf("group %s running=%v", id, seen.Groups[id])
		}
	}
	if (known.Registry == "") != (seen.Registry == "") {
		if seen.Registry != "" {
			return "schema registry: " + seen.Registry
		}
		return "schema registry answers again"
	}
	if known.CaughtUp != seen.CaughtUp {
		return fmt.Sprintf("caught up=%v", seen.CaughtUp)
	}
	if !sameHolds(known.Held, seen.Held) {
		return fmt.Sprintf("held by open transactions: %d partitions", len(seen.Held))
	}
	return ""
}
