package kafka

import (
	"context"
	"time"
)

// Feed is one partition followed by the client's shared fetcher
// (fetcher.go): the fetcher reads it in the same Fetch requests as every
// other partition followed on its leader, and keeps one answer that moved
// ahead of its reader, so the next request is under way while the reader
// parses. A Feed is read by one goroutine; Close it when done.
type Feed struct {
	f      *fetcher
	signal chan struct{} // cap 1: Next has something to take; shared by a Feeds' feeds

	// Guarded by f.mu.
	req      FetchRequest  // Offset: where the fetcher reads next
	wait     time.Duration // the wait of the next request it is in
	inFlight bool
	ahead    *FetchResult // fetched, moved, not yet taken
	err      error        // the fetch failed; Next returns it
	seen     watermarks   // the partition's ends, as last answered
	told     watermarks   // seen, as last returned by Next
	closed   bool
}

// watermarks are a partition's ends as an answer gave them.
type watermarks struct{ high, stable int64 }

// Follow starts reading r's partition from r.Offset, up to r.Stop if
// above 0, at r.Isolation, at most r.MaxBytes an answer. A request waits at
// most r.MaxWait for records while the partition has them, and up to
// r.IdleWait after answers that found none.
func (c *Client) Follow(r FetchRequest) *Feed {
	return c.follow(r, make(chan struct{}, 1))
}

func (c *Client) follow(r FetchRequest, signal chan struct{}) *Feed {
	fd := &Feed{f: c.fetcher, req: r, wait: r.MaxWait, signal: signal,
		seen: watermarks{-1, -1}, told: watermarks{-1, -1}}
	c.fetcher.add(fd)
	return fd
}

// Feeds are partitions followed together and read by one goroutine: it
// waits on Ready, then polls each feed (Feed.Poll), so a reader of many
// partitions needs no goroutine per partition. Ready fires after any of
// them has something new since it was last polled.
type Feeds struct {
	c     *Client
	ready chan struct{}
}

// Feeds returns an empty set of feeds.
func (c *Client) Feeds() *Feeds { return &Feeds{c: c, ready: make(chan struct{}, 1)} }

// Follow starts reading r's partition as Client.Follow does; the feed is
// read by Poll after Ready, not by Next.
func (fs *Feeds) Follow(r FetchRequest) *Feed { return fs.c.follow(r, fs.ready) }

// Ready fires when a feed of the set may have something to take.
func (fs *Feeds) Ready() <-chan struct{} { return fs.ready }

// Next returns the partition's next answer that moved (records, or passed
// markers or aborted records: Next is past the previous one's), or, when
// none is waiting, an empty one whose watermarks changed since the last
// returned (Next unchanged), or the fetch's error, which ends the feed. It
// waits for one until ctx ends; at its Stop it returns an empty answer.
func (fd *Feed) Next(ctx context.Context) (FetchResult, error) {
	for {
		if res, ok, err := fd.take(); ok || err != nil {
			return res, err
		}
		select {
		case <-fd.signal:
		case <-ctx.Done():
			return FetchResult{}, ctx.Err()
		}
	}
}

// Poll is Next without waiting: ok is false when nothing is there to take.
// A feed of a Feeds is read by Poll alone.
func (fd *Feed) Poll() (res FetchResult, ok bool, err error) { return fd.take() }

func (fd *Feed) take() (FetchResult, bool, error) {
	f := fd.f
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case fd.ahead != nil:
		res := *fd.ahead
		fd.ahead = nil
		fd.told = watermarks{res.HighWatermark, res.LastStableOffset}
		f.pokeLocked() // the feed can be fetched again
		return res, true, nil
	case fd.err != nil:
		return FetchResult{}, false, fd.err
	case fd.seen != fd.told || fd.atStop():
		fd.told = fd.seen
		return FetchResult{Next: fd.req.Offset, HighWatermark: fd.seen.high, LastStableOffset: fd.seen.stable}, true, nil
	}
	return FetchResult{}, false, nil
}

// atStop: the feed reached its Stop; it is fetched no more.
func (fd *Feed) atStop() bool { return fd.req.Stop > 0 && fd.req.Offset >= fd.req.Stop }

// ready: the fetcher may put the feed in its next request.
func (fd *Feed) ready() bool {
	return !fd.closed && !fd.inFlight && fd.ahead == nil && fd.err == nil && !fd.atStop()
}

// Close stops following the partition and drops what was fetched ahead.
// An answer in flight is dropped when it comes.
func (fd *Feed) Close() {
	f := fd.f
	f.mu.Lock()
	ahead := fd.ahead
	fd.ahead, fd.closed = nil, true
	delete(f.feeds, fd)
	f.pokeLocked()
	f.mu.Unlock()
	if ahead != nil {
		ahead.Recycle()
	}
}

// settleLocked takes the outcome of a fetch of the feed, with f.mu held:
// an answer that moved waits for Next, an empty one only notes the
// watermarks and lengthens the wait. tell: Next has something new.
func (fd *Feed) settleLocked(res FetchResult, err error) (tell bool) {
	fd.inFlight = false
	if fd.closed {
		res.Recycle()
		return false
	}
	switch {
	case err != nil:
		fd.err = err
	case res.Next != fd.req.Offset:
		fd.seen = watermarks{res.HighWatermark, res.LastStableOffset}
		fd.req.Offset, fd.wait = res.Next, fd.req.MaxWait
		fd.ahead = &res
	default:
		fd.seen = watermarks{res.HighWatermark, res.LastStableOffset}
		fd.wait = min(2*fd.wait, max(fd.req.IdleWait, fd.req.MaxWait))
		res.Recycle()
	}
	return fd.err != nil || fd.ahead != nil || fd.seen != fd.told || fd.atStop()
}

// tell wakes Next.
func (fd *Feed) tell() {
	select {
	case fd.signal <- struct{}{}:
	default:
	}
}
