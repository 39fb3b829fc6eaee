package kafka

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	fetchapi "github.com/segmentio/kafka-go/protocol/fetch"
)

// fetched is one partition's part of a multi-partition fetch.
type fetched struct {
	res FetchResult
	err error
}

// answerRef is a fetch response's buffer, shared by the results of its
// partitions: it goes back to answerBufs when the last of them is recycled.
type answerRef struct {
	buf  *[]byte
	refs atomic.Int32
}

func (a *answerRef) release() {
	if a.refs.Add(-1) == 0 {
		answerBufs.Put(a.buf)
	}
}

// answerBudget bounds a multi-partition answer: each partition's own bound
// (FetchRequest.MaxBytes) adds up to the whole one, between requestMaxBytes
// and this. The whole bound is kept at or above the sum because a broker
// that cuts an answer short on the whole bound may cut inside a partition,
// and kfake then leaves that partition's aborted transactions out.
const answerBudget = 512 << 20

// fetchMany sends one Fetch request for rs, which must share their leader
// and isolation level and name each partition once, and reads every
// partition's answer: out[i] is rs[i]'s. The broker answers once any of
// them has a record, or after wait. err is the exchange's own failure.
func (c *Client) fetchMany(ctx context.Context, rs []FetchRequest, wait time.Duration) (out []fetched, err error) {
	ctx, cancel := context.WithTimeout(ctx, wait+fetchSlack)
	defer cancel()
	x := &fetchExchange{Request: manyRequest(rs, wait)}
	c.fetches.Add(1)
	m, err := c.transport.RoundTrip(ctx, c.addr, x)
	if err != nil {
		if x.answer != nil { // answered, but too late for ctx
			answerBufs.Put(x.answer.buf)
		}
		return nil, err
	}
	raw, ok := m.(*rawAnswer)
	if !ok {
		return nil, fmt.Errorf("fetch answered with %T", m)
	}
	return readAnswer(raw, rs)
}

// manyRequest is the Fetch request of rs: their partitions by topic, in
// the order given.
func manyRequest(rs []FetchRequest, wait time.Duration) fetchapi.Request {
	req := fetchapi.Request{
		ReplicaID:      -1,
		MaxWaitTime:    int32(wait.Milliseconds()),
		MinBytes:       1,
		IsolationLevel: rs[0].Isolation.wire(),
		SessionEpoch:   -1, // no fetch session: every request is a full one
	}
	topic := map[string]int{}
	total := 0
	for _, r := range rs {
		i, ok := topic[r.Topic]
		if !ok {
			i = len(req.Topics)
			topic[r.Topic] = i
			req.Topics = append(req.Topics, fetchapi.RequestTopic{Topic: r.Topic})
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, fetchapi.RequestPartition{
			Partition:          r.Partition,
			CurrentLeaderEpoch: -1,
			FetchOffset:        r.Offset,
			LogStartOffset:     -1,
			PartitionMaxBytes:  int32(r.MaxBytes),
		})
		total += r.MaxBytes
	}
	req.MaxBytes = int32(min(max(total, requestMaxBytes), answerBudget))
	return req
}

// partitionKey names a partition of a topic.
type partitionKey struct {
	topic     string
	partition int32
}

// readAnswer reads each of rs's partitions out of a response.
func readAnswer(raw *rawAnswer, rs []FetchRequest) ([]fetched, error) {
	ref := &answerRef{buf: raw.buf}
	ref.refs.Store(1) // readAnswer's own, released at its end
	defer ref.release()
	a, err := parseFetchAnswer(*raw.buf, raw.version)
	if err != nil {
		return nil, err
	}
	if a.errorCode != 0 {
		return nil, kafkago.Error(a.errorCode)
	}
	parts := map[partitionKey]*partitionAnswer{}
	for i := range a.topics {
		t := &a.topics[i]
		for j := range t.partitions {
			parts[partitionKey{t.topic, t.partitions[j].partition}] = &t.partitions[j]
		}
	}
	out := make([]fetched, len(rs))
	for i, r := range rs {
		p := parts[partitionKey{r.Topic, r.Partition}]
		if p == nil {
			out[i].err = fmt.Errorf("the broker's fetch answer has no partition %s[%d]", r.Topic, r.Partition)
			continue
		}
		out[i].res, out[i].err = readPartition(p, r, ref)
	}
	return out, nil
}

// readPartition reads one partition's answer; its result holds a reference
// to the response when it has records.
func readPartition(p *partitionAnswer, r FetchRequest, ref *answerRef) (FetchResult, error) {
	res := FetchResult{Next: r.Offset, HighWatermark: p.highWatermark, LastStableOffset: p.lastStableOffset}
	if p.errorCode != 0 {
		return FetchResult{HighWatermark: p.highWatermark}, kafkago.Error(p.errorCode)
	}
	if len(p.records) == 0 {
		return res, nil
	}
	ref.refs.Add(1)
	res.bufs = &fetchBufs{answer: ref}
	if rs, ok := recordSlices.Get().(*[]Record); ok {
		res.Records = *rs
	}
	if d, ok := decompressedBufs.Get().(*[]byte); ok {
		res.bufs.decompressed = *d
	}
	bs := &batches{w: wire{b: p.records}, dec: &res.bufs.decompressed}
	if err := readBatches(p, r, bs, &res); err != nil {
		res.Recycle()
		return FetchResult{HighWatermark: p.highWatermark}, err
	}
	return res, nil
}
