package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/domain"
	"handoff/internal/eventgen"
)

// The transactional backlog (variant off-txn) holds the backlog's events as
// a transactional upstream writes them: in committed transactions of
// txnSize events over every partition, and after every txnAbortEvery of
// them an aborted transaction of txnAbortedSize more events (copies of
// backlog events: were one published, the count check would see it).
// Reading it costs what read committed adds: the aborted batches, one
// commit or abort marker per partition and transaction, and the abort
// filter.
const (
	txnBacklogTopic = "bench-txn"
	txnSize         = 2000
	txnAbortEvery   = 3
	txnAbortedSize  = 500
)

// ensureTxnBacklog produces the transactional backlog and returns each
// partition's end (its last marker included) and the aborted events.
func ensureTxnBacklog(ctx context.Context, s *stack, o options, res *result) (domain.Offsets, int64, error) {
	if err := s.createTopic(ctx, txnBacklogTopic, o.partitions); err != nil {
		return nil, 0, err
	}
	logf("producing %d events to %s in transactions of %d, one of %d aborted after every %d", o.events, txnBacklogTopic, txnSize, txnAbortedSize, txnAbortEvery)
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(s.brokers...),
		kgo.DefaultProduceTopic(txnBacklogTopic),
		kgo.TransactionalID("bench-backlog"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(16<<10),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(100_000),
	)
	if err != nil {
		return nil, 0, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	// The committed events are the plain backlog's, in its order; the
	// aborted ones come from a generator of their own.
	b := newBacklog(o.events, o.partitions, res.backlogEnd)
	junk := newBacklog(o.events, o.partitions, res.backlogEnd)
	var acks eventgen.Acks
	var aborted int64
	for start, txn := int64(0), 0; start < b.n; txn++ {
		if err := cl.BeginTransaction(); err != nil {
			return nil, 0, err
		}
		commit := txn%(txnAbortEvery+1) != txnAbortEvery
		n := int64(txnSize)
		if !commit {
			n = txnAbortedSize
		}
		src := b
		if !commit {
			src = junk // events that must never show
		}
		for k := range n {
			i := start + k
			if commit && i >= b.n {
				n = k
				break
			}
			v := append([]byte(nil), src.event(i%b.n)...)
			cl.Produce(ctx, &kgo.Record{Value: v, Partition: int32(i % int64(b.partitions))}, acks.Done)
		}
		if err := cl.Flush(ctx); err != nil {
			return nil, 0, fmt.Errorf("produce to %s: %w", txnBacklogTopic, err)
		}
		if err := acks.Err(); err != nil {
			return nil, 0, fmt.Errorf("produce to %s: %w", txnBacklogTopic, err)
		}
		how := kgo.TryAbort
		if commit {
			how = kgo.TryCommit
			start += n
		} else {
			aborted += n
		}
		if err := cl.EndTransaction(ctx, how); err != nil {
			return nil, 0, fmt.Errorf("end transaction %d: %w", txn, err)
		}
	}
	ends, err := topicEnds(ctx, s.brokers, txnBacklogTopic, o.partitions)
	return ends, aborted, err
}

// txnBacklogIfAsked produces the transactional backlog when a variant
// reads it, and returns its ends (nil otherwise).
func txnBacklogIfAsked(ctx context.Context, s *stack, o options, res *result) (domain.Offsets, error) {
	if !slices.ContainsFunc(o.variants, func(k string) bool { return variants[k].txn }) {
		return nil, nil
	}
	ends, aborted, err := ensureTxnBacklog(ctx, s, o, res)
	if err != nil {
		return nil, err
	}
	res.TxnAbortedEvents = aborted
	logf("%s: ends %v (%d offsets for %d events: %d aborted, the rest markers)", txnBacklogTopic, ends, ends.Sum(), o.events, aborted)
	return ends, nil
}
