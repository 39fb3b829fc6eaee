package kafka

import (
	"context"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// leaderCache is which broker leads each partition the fetcher reads, from
// the cluster's metadata; forgotten after a fetch that says a leader
// moved, and after leaderTTL.
type leaderCache struct {
	mu  sync.Mutex
	of  map[string]map[int32]int32 // topic → partition → leader's node id
	set time.Time
}

const (
	leaderTTL     = time.Minute
	leaderTimeout = 10 * time.Second
)

// leaders returns the leader of each feed's partition: -1 for a partition
// the metadata names no leader of (a topic it does not know, an election
// under way) or when the metadata could not be read, so that the feed is
// fetched alone, which finds out and says what is wrong.
func (c *Client) leaders(ctx context.Context, feeds []*Feed) []int32 {
	lc := &c.leaderCache
	lc.mu.Lock()
	if time.Since(lc.set) > leaderTTL {
		lc.of, lc.set = map[string]map[int32]int32{}, time.Now()
	}
	var missing []string
	asked := map[string]bool{}
	for _, fd := range feeds {
		t := fd.req.Topic
		if _, ok := lc.of[t]; !ok && !asked[t] {
			asked[t] = true
			missing = append(missing, t)
		}
	}
	lc.mu.Unlock()
	if len(missing) > 0 {
		c.learnLeaders(ctx, missing)
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	out := make([]int32, len(feeds))
	for i, fd := range feeds {
		l, ok := lc.of[fd.req.Topic][fd.req.Partition]
		if !ok || l < 0 {
			l = -1
		}
		out[i] = l
	}
	return out
}

// learnLeaders reads the leaders of topics' partitions; a topic the
// metadata does not hold is noted without leaders until the next
// forgetting.
func (c *Client) learnLeaders(ctx context.Context, topics []string) {
	ctx, cancel := context.WithTimeout(ctx, leaderTimeout)
	defer cancel()
	res, err := c.c.Metadata(ctx, &kafkago.MetadataRequest{Topics: topics})
	if err != nil {
		return // every feed of them is fetched alone, which says why
	}
	lc := &c.leaderCache
	lc.mu.Lock()
	defer lc.mu.Unlock()
	for _, t := range topics {
		lc.of[t] = map[int32]int32{}
	}
	for _, t := range res.Topics {
		if t.Error != nil {
			continue
		}
		m := map[int32]int32{}
		for _, p := range t.Partitions {
			if p.Error == nil {
				m[int32(p.ID)] = int32(p.Leader.ID)
			}
		}
		lc.of[t.Name] = m
	}
}

// forgetLeaders drops what is known of leaders, and the transport's
// connections and metadata: a fetch said a leader moved or a partition is
// unknown.
func (c *Client) forgetLeaders() {
	lc := &c.leaderCache
	lc.mu.Lock()
	lc.set = time.Time{}
	lc.mu.Unlock()
	c.refresh()
}
