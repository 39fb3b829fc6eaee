package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/protocol"
	"handoff/internal/segment"
)

// How long one fetch waits for records: fetchWait, doubled after each
// fetch that found none up to fetchWaitIdle. The broker answers as soon as
// a record arrives, so the wait costs no latency; it sets how often a quiet
// partition is asked (4 times a second at first, once every 4 s when
// idle). Every partition a worker reads is asked in the same request as
// the others on its broker (kafka.Client.Follow). A stream asked to return
// does not wait for a fetch in flight.
const (
	fetchWait     = 250 * time.Millisecond
	fetchWaitIdle = 4 * time.Second
)

// partFeed is one partition a stream follows.
type partFeed struct {
	p       domain.Partition
	offset  int64 // where the next batch starts
	stop    int64
	bounded bool
	feed    *kafka.Feed
	done    bool // nothing more to read: at its Until, or its topic is gone
	gone    bool // its topicPattern's topic was deleted
}

// streamFeeds are the partitions of a stream, followed from their staged
// positions through the client's shared fetcher and read by the stream's
// own loop: no goroutine per partition.
type streamFeeds struct {
	set   *kafka.Feeds
	parts []*partFeed
	iso   kafka.Isolation
	next  int // where the next poll starts, so no partition starves
}

// follow starts following every partition of the stream that has
// something left to read before Until.
func (s *stream) follow() *streamFeeds {
	fs := &streamFeeds{set: s.a.Kafka.Feeds(), iso: kafka.IsolationOf(s.in.Spec.IOConfig)}
	for _, p := range s.res.To.Partitions() {
		pf := &partFeed{p: p, offset: s.res.To[p]}
		pf.stop, pf.bounded = s.in.Until[p]
		if pf.bounded && pf.offset >= pf.stop {
			continue
		}
		pf.feed = fs.set.Follow(kafka.FetchRequest{Topic: s.in.Spec.IOConfig.TopicOf(p), Partition: p.Partition, Offset: pf.offset, Stop: pf.stop,
			MaxBytes: fetchMaxBytes, MaxWait: fetchWait, IdleWait: fetchWaitIdle, Isolation: fs.iso})
		fs.parts = append(fs.parts, pf)
	}
	return fs
}

// atStop: the partition reached its Until, and is followed no more.
func (pf *partFeed) atStop() bool {
	if pf.bounded && pf.offset >= pf.stop && !pf.done {
		pf.done = true
		pf.feed.Close()
		pf.feed = nil
	}
	return pf.done
}

// close stops following every partition, dropping what was fetched ahead.
func (fs *streamFeeds) close() {
	for _, pf := range fs.parts {
		if pf.feed != nil {
			pf.feed.Close()
			pf.feed = nil
		}
	}
}

// finished: every partition reached its Until. A gone topic's partition
// never does: the stream ends otherwise (its supervisor lays the groups
// out again without the topic).
func (fs *streamFeeds) finished() bool {
	for _, pf := range fs.parts {
		if !pf.done || pf.gone {
			return false
		}
	}
	return true
}

// poll takes what the partitions have, in turn: a batch that moved (sent
// to the stream), or only news of a partition's ends (s.saw). ok is false
// once no partition has anything.
func (s *stream) poll(ctx context.Context, fs *streamFeeds) (b batch, ok bool, err error) {
	for range len(fs.parts) {
		pf := fs.parts[fs.next]
		fs.next = (fs.next + 1) % len(fs.parts)
		if pf.done {
			continue
		}
		for {
			res, got, err := pf.feed.Poll()
			switch {
			case err != nil:
				return batch{}, false, s.fetchFailed(ctx, pf, err)
			case !got:
			case res.Next == pf.offset:
				s.saw(pf.p, res, fs.iso)
				res.Recycle()
				if !pf.atStop() {
					continue // an answer that moved may wait behind it
				}
			default:
				s.saw(pf.p, res, fs.iso)
				pf.offset = res.Next
				pf.atStop()
				return batch{partition: pf.p, res: res}, true, nil
			}
			break
		}
	}
	return batch{}, false, nil
}

// fetchFailed: a partition's feed failed. A topicPattern's topic that was
// deleted has nothing more to read: its partition waits for the read to
// end. Anything else fails the stream (outOfRange explains an offset out
// of range).
func (s *stream) fetchFailed(ctx context.Context, pf *partFeed, err error) error {
	pf.feed.Close()
	pf.feed, pf.done = nil, true
	if ctx.Err() != nil {
		return nil
	}
	if s.in.Spec.IOConfig.MultiTopic() && errors.Is(err, kafka.ErrTopicNotFound) {
		pf.gone = true
		return nil
	}
	in := protocol.ConsumeInput{Spec: s.in.Spec, Group: s.in.Group, SequenceName: s.in.SequenceName}
	return s.a.outOfRange(ctx, in, pf.p, pf.offset, err) // other errors unchanged
}

// writeChunk writes a chunk's rows to its staging file.
func (a *Activities) writeChunk(ctx context.Context, c *chunk, key string) (segment.Info, error) {
	s := c.stage() // chunk_stage.go
	defer s.release()
	var info segment.Info
	err := a.Staging.Put(ctx, key, func(w io.Writer) (err error) {
		info, err = s.write(w)
		return err
	})
	if err != nil {
		return segment.Info{}, fmt.Errorf("write staging file %s: %w", key, err)
	}
	return info, nil
}
