package activities

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/lagview"
	"handoff/internal/parse"
	"handoff/internal/protocol"
	"handoff/internal/rollup"
	"handoff/internal/workload"
)

// How often a stream heartbeats. A heartbeat holds what the stream staged,
// which a retry after a worker loss resumes from (what was staged after it
// is read again): while the stream stages many records, every
// busyHeartbeatEvery (the worker lets heartbeats through this often:
// worker/modules.go), so little is read again; while it stages a few,
// every slowHeartbeatEvery (a group at a few events a second costs about
// 8,600 heartbeats a day, not 43,000); while its topic is quiet, just often
// enough for its heartbeat timeout (2 minutes). Heartbeats are billed as
// actions on Temporal Cloud. All bound how long a cancellation takes to
// arrive (a group wakes its stream instead: WakeConsume).
const (
	busyHeartbeatEvery = 2 * time.Second
	slowHeartbeatEvery = 10 * time.Second
	idleHeartbeatEvery = 80 * time.Second
	// busyRecords read since the last heartbeat make a stream busy.
	busyRecords = 1000
	// streamTick is how often a stream with records in its open chunk, or
	// that read some in the last idleStreamTick, checks what is due; a
	// quiet one checks only when something is (nextCheck).
	streamTick     = 250 * time.Millisecond
	idleStreamTick = 2 * time.Second
	// flushTimeout bounds staging the last chunk after the stream was
	// asked to return.
	flushTimeout = 2 * time.Minute
)

// ConsumeStream reads the group's partitions for as long as nothing needs
// its group: it stages a chunk whenever maxRowsInMemory, maxBytesInMemory
// or maxRecordsPerChunk is reached or its first record is chunkPeriod old,
// and returns everything it staged when a handoff trigger holds, it read
// to Until, its group wakes it (WakeConsume) or cancels it, the worker
// stops, or MaxRun passed. Each staged chunk is in the stream's heartbeat
// before the next is read, and a retried stream resumes from the last
// heartbeat that reached the server, so a killed worker loses nothing and
// what is read again is bounded by the heartbeat interval while busy.
// Unparseable rows are settled per chunk, as in Consume.
func (a *Activities) ConsumeStream(ctx context.Context, in protocol.ConsumeStreamInput) (protocol.ConsumeStreamResult, error) {
	if _, err := parse.New(in.Spec.DataSchema, in.Spec.IOConfig); err != nil {
		return protocol.ConsumeStreamResult{}, temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrInvalidSpec, nil)
	}
	s := newStream(ctx, a, in)
	return s.run(ctx)
}

// stream is the state of one ConsumeStream attempt.
type stream struct {
	a     *Activities
	in    protocol.ConsumeStreamInput
	log   *slog.Logger
	tag   string       // tells this attempt's chunk files apart from any other's
	local *localStream // what a watch of this process reads of it; nil outside a workflow

	res          protocol.ConsumeStreamResult // staged so far
	chunk        *chunk                       // being filled, or nil
	chunkStarted time.Time                    // its first record's read time
	started      time.Time
	lastBeat     time.Time
	lastRecord   time.Time // when the latest record was read; zero: none yet
	dirty        bool      // staged something since the last heartbeat
	beatRecords  int64     // records read as of the last heartbeat

	mu          sync.Mutex
	reason      string
	hwm         domain.Offsets // latest offsets the fetches saw, at the spec's isolation level
	held        map[domain.Partition]domain.HeldPartition
	heldChanged bool // since the last heartbeat
}

// streamBeat is what a stream heartbeats. State and Offsets (read so far,
// staged or not) are what status readers look at, as in a Consume's
// heartbeat; Staged is what a retry resumes from.
type streamBeat struct {
	State          string         `json:"state"`
	Offsets        domain.Offsets `json:"offsets"`
	Rows           int64          `json:"rows"`
	Bytes          int64          `json:"bytes"`
	HighWatermarks domain.Offsets `json:"highWatermarks,omitempty"`
	// Held are the partitions an open transaction holds (stream_held.go).
	Held   []domain.HeldPartition       `json:"held,omitempty"`
	Staged protocol.ConsumeStreamResult `json:"staged"`
}

func newStream(ctx context.Context, a *Activities, in protocol.ConsumeStreamInput) *stream {
	s := &stream{a: a, in: in, log: a.Log, started: time.Now(), hwm: domain.Offsets{}}
	s.res.To = in.From.Clone()
	info := activity.GetInfo(ctx)
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s/%d", info.WorkflowExecution.RunID, info.ActivityID, info.Attempt)
	s.tag = fmt.Sprintf("%08x", h.Sum32())
	if info.ActivityID != "" {
		s.log = s.log.With("workflow", info.WorkflowExecution.ID, "activity", info.ActivityType.Name, "attempt", info.Attempt)
	}
	s.log = s.log.With("supervisor", in.Spec.ID, "group", in.Group, "sequence", in.SequenceName)
	if activity.HasHeartbeatDetails(ctx) {
		var b streamBeat
		if err := activity.GetHeartbeatDetails(ctx, &b); err == nil && b.Staged.To != nil {
			s.res = b.Staged
			for p, o := range in.From {
				if _, ok := s.res.To[p]; !ok {
					s.res.To[p] = o
				}
			}
			s.log.Info("stream resumes from its last heartbeat", "offsets", s.res.To.String(), "chunks", len(s.res.Chunks))
		}
	}
	return s
}

// stopWith records why the stream returns (the first reason wins).
func (s *stream) stopWith(reason string, stop context.CancelFunc) {
	s.mu.Lock()
	if s.reason == "" {
		s.reason = reason
	}
	s.mu.Unlock()
	stop()
}

func (s *stream) why() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

func (s *stream) run(ctx context.Context) (protocol.ConsumeStreamResult, error) {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var forget func()
	s.local, forget = s.a.local.register(ctx)
	defer forget()
	s.listen(ctx, sctx, stop)
	if prev := s.in.PreviousStopped; !prev.IsZero() && s.a.Metrics != nil {
		s.a.Metrics.ReadGap(s.in.Spec.ID, max(0, time.Since(prev)))
	}
	feeds := s.follow()
	err := s.loop(sctx, stop, feeds)
	feeds.close()
	s.res.StoppedAt = time.Now()
	stop()
	if err != nil {
		return protocol.ConsumeStreamResult{}, classify(err)
	}
	if err := s.flush(ctx); err != nil {
		return protocol.ConsumeStreamResult{}, err
	}
	s.res.Reason = s.why()
	switch {
	case s.res.Reason != "":
	case ctx.Err() != nil:
		s.res.Reason = protocol.StreamCanceled
	default:
		s.res.Reason = protocol.StreamUntil
	}
	s.log.Debug("stream returns", "reason", s.res.Reason, "to", s.res.To.String(), "chunks", len(s.res.Chunks))
	return s.res, nil
}

// listen stops the stream when its group wakes it or the worker stops.
func (s *stream) listen(ctx, sctx context.Context, stop context.CancelFunc) {
	workerStop := activity.GetWorkerStopChannel(ctx)
	var woken <-chan struct{}
	forget := func() {}
	if s.a.Wakeups != nil && s.in.WakeKey != "" {
		woken, forget = s.a.Wakeups.Watch(ctx, s.in.WakeKey)
	}
	go func() {
		defer forget()
		select {
		case <-woken:
			s.stopWith(protocol.StreamWoken, stop)
		case <-workerStop:
			s.stopWith(protocol.StreamWorkerStop, stop)
		case <-sctx.Done():
		}
	}()
}

// loop parses what the feeds have and checks what is due (check) when
// nextCheck says. It waits on the feeds, the next check and ctx alone,
// so a quiet stream wakes only when something is due.
func (s *stream) loop(ctx context.Context, stop context.CancelFunc, fs *streamFeeds) error {
	s.lastBeat = time.Now()
	s.heartbeat(ctx)
	due := s.lastBeat.Add(streamTick)
	timer := time.NewTimer(streamTick)
	defer timer.Stop()
	for {
		b, got, err := s.poll(ctx, fs)
		if err != nil {
			return err
		}
		if got {
			if err := s.add(ctx, b); err != nil {
				if ctx.Err() != nil {
					return nil // asked to return while waiting for a slot: the batch is read again
				}
				return err
			}
		} else if fs.finished() {
			return nil // every partition reached Until
		}
		// What was read or seen may bring the next check closer.
		if want := s.nextCheck(time.Now()); want.Before(due) {
			due = want
			timer.Reset(time.Until(due))
		}
		var now time.Time
		if got { // more may wait: take it, unless a check is due first
			select {
			case <-ctx.Done():
				return nil
			case now = <-timer.C:
			default:
				continue
			}
		} else {
			select {
			case <-fs.set.Ready():
				continue
			case <-ctx.Done():
				return nil
			case now = <-timer.C:
			}
		}
		if done, err := s.check(ctx, stop, now); done || err != nil {
			return err
		}
		due = s.nextCheck(time.Now())
		timer.Reset(time.Until(due))
	}
}

// check stages a chunk whose chunkPeriod passed, and stops the stream
// (done) when a trigger holds, it is quiet or MaxRun passed; else it
// heartbeats if that is due.
func (s *stream) check(ctx context.Context, stop context.CancelFunc, now time.Time) (done bool, err error) {
	if s.chunk != nil && s.chunk.records > 0 && now.Sub(s.chunkStarted) >= s.in.Spec.TuningConfig.ChunkPeriod.D() {
		if err := s.flush(ctx); err != nil {
			return true, err
		}
	}
	if r := s.trigger(now); r != "" {
		s.stopWith(r, stop)
		return true, nil
	}
	if s.quiet(now) {
		s.stopWith(protocol.StreamQuiet, stop)
		return true, nil
	}
	if s.in.MaxRun > 0 && now.Sub(s.started) >= s.in.MaxRun {
		s.stopWith(protocol.StreamMaxRun, stop)
		return true, nil
	}
	if s.beatDue(now) {
		s.heartbeat(ctx)
	}
	return false, nil
}

// nextCheck is when the loop next checks what is due: streamTick on while
// a chunk holds records (its chunkPeriod is near) or records came in the
// last idleStreamTick (a trigger the last chunk's flush made true is seen
// at once); otherwise the first moment check can find anything to do (a
// heartbeat, a handoff by age, quiet, MaxRun), so an idle stream sleeps
// until its next heartbeat instead of waking every few seconds.
func (s *stream) nextCheck(now time.Time) time.Time {
	soon := now.Add(streamTick)
	if (s.chunk != nil && s.chunk.records > 0) || now.Sub(s.lastRecord) < idleStreamTick {
		return soon
	}
	next := s.nextBeat()
	if t := s.in.Close; t != nil && s.in.Spec.TuningConfig.IntermediateHandoffPeriod > 0 && (t.Progressed || s.readRecords() > 0) {
		next = earliest(next, s.handoffDue())
	}
	if s.in.QuietAfter > 0 && !s.lastRecord.IsZero() {
		next = earliest(next, later(s.lastRecord.Add(s.in.QuietAfter), s.started.Add(s.in.MinRun)))
	}
	if s.in.MaxRun > 0 {
		next = earliest(next, s.started.Add(s.in.MaxRun))
	}
	return later(next, soon)
}

// nextBeat is the first moment beatDue can hold if nothing is read
// meanwhile.
func (s *stream) nextBeat() time.Time {
	every := idleHeartbeatEvery
	switch {
	case s.heldMoved():
		every = busyHeartbeatEvery
	case !s.dirty:
	case s.readRecords()-s.beatRecords >= busyRecords:
		every = busyHeartbeatEvery
	default:
		every = s.slowBeat()
	}
	return s.lastBeat.Add(every)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// add parses one fetched batch, staging a chunk each time one is full,
// then takes the batch's end (past any markers or aborted records after
// its last record). Rows keep nothing of the records, so the batch's
// buffers are then reused.
func (s *stream) add(ctx context.Context, b batch) error {
	defer b.res.Recycle()
	now := time.Now()
	if len(b.res.Records) > 0 {
		s.lastRecord = now
		if s.res.FirstRecordAt.IsZero() {
			s.res.FirstRecordAt = now
		}
	}
	budget := int64(s.in.Spec.TuningConfig.MaxRecordsPerChunk)
	for _, r := range b.res.Records {
		if s.chunk == nil {
			if err := s.open(ctx); err != nil {
				return err
			}
			s.chunkStarted = now
		}
		if err := s.chunk.add(b.partition, r, now); err != nil {
			return err
		}
		if s.chunk.records >= budget || s.chunk.full() {
			if err := s.flush(ctx); err != nil {
				return err
			}
		}
	}
	s.passed(b)
	return nil
}

// open starts a chunk at the staged position, holding a consume slot of
// the worker (and waiting, heartbeating, while memory pushes back).
func (s *stream) open(ctx context.Context) error {
	parser, err := parse.New(s.in.Spec.DataSchema, s.in.Spec.IOConfig)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrInvalidSpec, nil)
	}
	in := protocol.ConsumeInput{
		Spec: s.in.Spec, Group: s.in.Group, SequenceName: s.in.SequenceName,
		From: s.res.To.Clone(), Until: s.in.Until, ParseExceptions: s.in.ParseExceptions + s.res.Unparseable,
	}
	run := &running{log: s.log}
	if run.h, err = s.slot(ctx, in); err != nil {
		return err
	}
	run.state(workload.StateReading)
	s.chunk = &chunk{
		a: s.a, in: in, parser: parser, to: in.From.Clone(), run: run,
		buf: rollup.New(s.in.Spec.DataSchema.MetricsSpec, s.in.Spec.DataSchema.GranularitySpec.RollupOn()),
	}
	return nil
}

// slot takes a consume slot, heartbeating while it waits.
func (s *stream) slot(ctx context.Context, in protocol.ConsumeInput) (*workload.Handle, error) {
	if s.a.Tracker == nil {
		return nil, nil
	}
	w := workload.Work{
		Kind: workload.Consume, Supervisor: in.Spec.ID, Group: in.Group,
		Partitions: in.From.Partitions(), Sequence: in.SequenceName, Offsets: in.From,
	}
	if info := activity.GetInfo(ctx); info.ActivityID != "" {
		w.ID, w.Attempt = info.WorkflowExecution.ID+"/"+info.ActivityID, info.Attempt
	}
	return s.a.takeSlot(ctx, w, idleHeartbeatEvery/2, func() any { return s.beat(workload.StateWaitingForSlot) })
}

// flush stages the chunk being filled: its bad rows first, then its rows.
func (s *stream) flush(ctx context.Context) error {
	c := s.chunk
	if c == nil {
		return nil
	}
	s.chunk = nil
	if err := superseded(ctx); err != nil {
		if c.run.h != nil {
			c.run.h.End(err)
		}
		return err
	}
	// Staging finishes even when the stream was just asked to return: what
	// was read is kept rather than read again.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	err := s.stage(fctx, c)
	if c.run.h != nil { // a chunk's heartbeats are its stream's
		c.run.h.End(err)
	}
	return err
}

func (s *stream) stage(ctx context.Context, c *chunk) error {
	if err := c.settleBadRows(ctx); err != nil {
		return err
	}
	c.run.state(workload.StateWritingChunk)
	var rows, bytes int64
	if c.buf.Len() > 0 {
		key := stagingDir(s.in.Spec.ID, s.in.SequenceName) + offsetsName(c.in.From) + "_" + s.tag + ".run"
		info, err := s.a.writeChunk(ctx, c, key)
		if err != nil {
			return err
		}
		rows, bytes = info.Rows, info.Bytes
		s.res.Chunks = append(s.res.Chunks, protocol.ChunkRef{Key: key, Rows: rows, Bytes: bytes})
	}
	for p, o := range c.to {
		s.res.To[p] = o
	}
	s.res.Records += c.records
	s.res.Rows += rows
	s.res.Bytes += bytes
	s.res.Unparseable += c.unparseable
	s.res.ThrownAway += c.thrownAway
	s.res.NoValue += c.noValue
	s.res.Markers += c.markers
	s.res.Aborted += c.aborted
	s.dirty = true
	if s.a.Metrics != nil {
		s.a.Metrics.Consumed(s.in.Spec.ID, c.records, c.unparseable, c.thrownAway, c.bytesRead, time.Since(s.chunkStarted))
		s.skipped(c.markers, c.aborted, c.noValue)
	}
	return nil
}

// trigger names the handoff trigger that holds for the open sequence, if
// any: the same ones a task group checks (taskgroup_plan.go).
func (s *stream) trigger(now time.Time) string {
	t := s.in.Close
	if t == nil {
		return ""
	}
	tc := s.in.Spec.TuningConfig
	rows := t.Rows + s.res.Rows
	if s.chunk != nil {
		rows += int64(s.chunk.buf.Len())
	}
	read := s.readRecords()
	switch {
	case rows >= tc.MaxRowsPerSegment:
		return protocol.StreamMaxRows
	case t.Bytes+s.res.Bytes >= tc.MaxSequenceBytes:
		return protocol.StreamMaxBytes
	case t.OtherRows+rows >= tc.MaxTotalRows:
		return protocol.StreamMaxTotalRows
	case tc.IntermediateHandoffPeriod > 0 && (t.Progressed || read > 0) && !now.Before(s.handoffDue()):
		return protocol.StreamHandoffPeriod
	}
	return ""
}

// handoffDue is when the open sequence hands off by age, once it holds a
// record: see protocol.CloseTriggers.
func (s *stream) handoffDue() time.Time {
	t, period := s.in.Close, s.in.Spec.TuningConfig.IntermediateHandoffPeriod.D()
	switch {
	case !t.Spread:
		return t.OpenedAt.Add(period)
	case t.Progressed:
		return t.HandoffAt
	default:
		return domain.HandoffDue(s.res.FirstRecordAt, period, t.Phase)
	}
}

// beatDue: a heartbeat is due (see busyHeartbeatEvery).
func (s *stream) beatDue(now time.Time) bool {
	since := now.Sub(s.lastBeat)
	switch {
	case since >= idleHeartbeatEvery:
		return true
	case s.heldMoved():
		return since >= busyHeartbeatEvery
	case !s.dirty:
		return false
	case s.readRecords()-s.beatRecords >= busyRecords:
		return since >= busyHeartbeatEvery
	default:
		return since >= s.slowBeat()
	}
}

// slowBeat is how often a stream reading a few records heartbeats:
// slowHeartbeatEvery, or half the lagCollectionRange of a supervisor that
// scales on lag (at least busyHeartbeatEvery), since the lag its watch
// samples over that range is the log's end less the positions heartbeats
// report: a shorter range needs fresher positions.
func (s *stream) slowBeat() time.Duration {
	sc := s.in.Spec.IOConfig.AutoScalerConfig
	if sc == nil || !sc.EnableTaskAutoScaler {
		return slowHeartbeatEvery
	}
	return min(slowHeartbeatEvery, max(busyHeartbeatEvery, sc.LagCollectionRange.D()/2))
}

// readRecords is how many records the stream has read, staged or not.
func (s *stream) readRecords() int64 {
	n := s.res.Records
	if s.chunk != nil {
		n += s.chunk.records
	}
	return n
}

// quiet: the stream read something, then nothing for QuietAfter, and ran
// for MinRun.
func (s *stream) quiet(now time.Time) bool {
	return s.in.QuietAfter > 0 && !s.lastRecord.IsZero() &&
		now.Sub(s.lastRecord) >= s.in.QuietAfter && now.Sub(s.started) >= s.in.MinRun
}

func (s *stream) heartbeat(ctx context.Context) {
	state := "waiting for data"
	if s.chunk != nil {
		state = workload.StateReading
	}
	b := s.beat(state)
	activity.RecordHeartbeat(ctx, b)
	s.local.beat(b)
	s.lastBeat, s.dirty, s.beatRecords = time.Now(), false, s.readRecords()
	if s.a.Metrics != nil {
		s.a.Metrics.Offsets(s.in.Spec.ID, lagview.Input{Current: b.Offsets})
	}
}

func (s *stream) beat(state string) streamBeat {
	b := streamBeat{State: state, Offsets: s.res.To.Clone(), Rows: s.res.Rows, Bytes: s.res.Bytes, Staged: s.res}
	b.Staged.To = s.res.To.Clone()
	if s.chunk != nil {
		for p, o := range s.chunk.to {
			b.Offsets[p] = o
		}
		b.Rows += int64(s.chunk.buf.Len())
	}
	s.mu.Lock()
	b.HighWatermarks = s.hwm.Clone()
	s.mu.Unlock()
	b.Held, _ = s.heldNow()
	return b
}
