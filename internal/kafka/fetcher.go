package kafka

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// fetcher reads every partition a client follows (Follow) in rounds: a
// round takes every feed ready to be fetched (none of its answers in
// flight or waiting to be taken) and sends one multi-partition Fetch
// request per leader and isolation level, waiting as long as the shortest
// wait among its feeds. So an idle worker asks each broker once per idle
// wait, not once per partition, over O(brokers) connections (kafka-go's
// transport keeps one per request in flight); a partition that had
// records is asked again in the next round, one answer ahead of its
// reader. At most maxRounds are in flight, and rounds start at least
// roundGap apart, which batches the partitions that become ready one by
// one. Requests are full ones (no fetch session), so a broker's fetch
// session slots never run out.
type fetcher struct {
	c       *Client
	mu      sync.Mutex
	feeds   map[*Feed]struct{}
	rounds  int  // in flight
	running bool // loop runs
	poke    chan struct{}
}

// maxRounds bounds the rounds in flight: one holding the idle partitions'
// long wait, and others for partitions that became ready meanwhile.
// roundGap is the least time between the starts of two rounds.
const (
	maxRounds = 4
	roundGap  = 20 * time.Millisecond
)

func newFetcher(c *Client) *fetcher {
	return &fetcher{c: c, feeds: map[*Feed]struct{}{}, poke: make(chan struct{}, 1)}
}

func (f *fetcher) add(fd *Feed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.feeds[fd] = struct{}{}
	if !f.running {
		f.running = true
		go f.loop()
	}
	f.pokeLocked()
}

// pokeLocked wakes the loop: a feed became ready, or a round ended.
func (f *fetcher) pokeLocked() {
	select {
	case f.poke <- struct{}{}:
	default:
	}
}

// loop starts rounds while feeds are followed; it ends when none is and
// no round is in flight (add starts it again).
func (f *fetcher) loop() {
	var last time.Time
	for {
		f.mu.Lock()
		if len(f.feeds) == 0 && f.rounds == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		var due []*Feed
		if f.rounds < maxRounds && f.anyReadyLocked() {
			if gap := roundGap - time.Since(last); gap > 0 {
				f.mu.Unlock()
				time.Sleep(gap)
				continue
			}
			due = f.dueLocked()
			f.rounds++
		}
		f.mu.Unlock()
		if due == nil {
			<-f.poke
			continue
		}
		last = time.Now()
		go f.round(due)
	}
}

func (f *fetcher) anyReadyLocked() bool {
	for fd := range f.feeds {
		if fd.ready() {
			return true
		}
	}
	return false
}

// dueKey: a request names each partition once; a second feed of the same
// partition waits for the next round.
type dueKey struct {
	partitionKey
	iso Isolation
}

// dueLocked marks every ready feed in flight and returns them.
func (f *fetcher) dueLocked() []*Feed {
	var due []*Feed
	seen := map[dueKey]bool{}
	for fd := range f.feeds {
		k := dueKey{partitionKey{fd.req.Topic, fd.req.Partition}, fd.req.Isolation}
		if !fd.ready() || seen[k] {
			continue
		}
		seen[k] = true
		fd.inFlight = true
		due = append(due, fd)
	}
	return due
}

// round fetches due feeds, one request per leader and isolation level,
// each settled as soon as it is answered.
func (f *fetcher) round(due []*Feed) {
	defer func() {
		f.mu.Lock()
		f.rounds--
		f.pokeLocked()
		f.mu.Unlock()
	}()
	ctx := context.Background()
	leaders := f.c.leaders(ctx, due)
	type groupKey struct {
		leader int32
		iso    Isolation
	}
	groups := map[groupKey][]*Feed{}
	for i, fd := range due {
		k := groupKey{leaders[i], fd.req.Isolation}
		groups[k] = append(groups[k], fd)
	}
	var wg sync.WaitGroup
	for k, g := range groups {
		if k.leader < 0 {
			wg.Go(func() { f.alone(ctx, g, len(g) == 1) })
			continue
		}
		wg.Go(func() { f.together(ctx, g) })
	}
	wg.Wait()
}

// together fetches feeds of one leader and isolation level in one request.
// A feed whose partition answered with an error, or all of them when the
// request failed, is fetched again alone (alone), which refreshes the
// metadata and says what went wrong as Fetch does; so is one that has
// records to read and got none, whose next batch is larger than its bound.
func (f *fetcher) together(ctx context.Context, g []*Feed) {
	if len(g) == 1 {
		f.alone(ctx, g, true)
		return
	}
	rs := make([]FetchRequest, len(g))
	wait := g[0].wait
	for i, fd := range g {
		rs[i] = fd.req
		wait = min(wait, fd.wait)
	}
	out, err := f.c.fetchMany(ctx, rs, wait)
	if err != nil {
		if retryable(err) {
			f.c.forgetLeaders()
		}
		f.alone(ctx, g, false)
		return
	}
	var failed, skipped []*Feed
	f.settle(g, func(i int) (FetchResult, error, bool) {
		switch res := out[i].res; {
		case out[i].err != nil:
			failed = append(failed, g[i])
			return FetchResult{}, nil, false
		case res.Next == rs[i].Offset && res.Latest(rs[i].Isolation) > rs[i].Offset:
			// Records to read, none returned: a first batch larger than
			// the partition's bound comes whole only first in an answer.
			res.Recycle()
			skipped = append(skipped, g[i])
			return FetchResult{}, nil, false
		}
		return out[i].res, nil, true
	})
	if len(failed) > 0 {
		f.c.forgetLeaders()
	}
	if len(failed)+len(skipped) > 0 {
		f.alone(ctx, append(failed, skipped...), false)
	}
}

// alone fetches each feed by a one-partition Fetch, a few at a time,
// waiting for records as long as the feed's wait if wait is set.
func (f *fetcher) alone(ctx context.Context, g []*Feed, wait bool) {
	out := make([]fetched, len(g))
	var eg errgroup.Group
	eg.SetLimit(8)
	for i, fd := range g {
		eg.Go(func() error {
			r := fd.req
			r.MaxWait = 0
			if wait {
				r.MaxWait = fd.wait
			}
			out[i].res, out[i].err = f.c.Fetch(ctx, r)
			return nil
		})
	}
	_ = eg.Wait()
	f.settle(g, func(i int) (FetchResult, error, bool) { return out[i].res, out[i].err, true })
}

// settle hands the feeds of g their outcomes (those outcome gives), under
// one lock, and wakes their readers and the loop.
func (f *fetcher) settle(g []*Feed, outcome func(i int) (FetchResult, error, bool)) {
	var tell []*Feed
	f.mu.Lock()
	for i, fd := range g {
		res, err, ok := outcome(i)
		if !ok {
			continue
		}
		if fd.settleLocked(res, err) {
			tell = append(tell, fd)
		}
	}
	f.pokeLocked()
	f.mu.Unlock()
	for _, fd := range tell {
		fd.tell()
	}
}
