package eventgen

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TxnProducer produces events in Kafka transactions, as Kafka Streams,
// Flink's exactly-once sink or Debezium do: each transaction's events are
// read by a read-committed consumer only if it commits.
type TxnProducer struct {
	g  *Generator
	cl *kgo.Client
	// open holds the indexes of the events of the transaction under way.
	open []int64
}

// NewTxnProducer connects a producer with transactional id txnID to topic.
// codec compresses its batches (kgo.NoCompression() for none). Records
// have no key and go round-robin over the partitions. opts add to or
// override the client's options (kgo.TransactionTimeout for a transaction
// held open longer than the default 40 s, after which the broker aborts it).
func (g *Generator) NewTxnProducer(brokers []string, topic, txnID string, codec kgo.CompressionCodec, opts ...kgo.Opt) (*TxnProducer, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.DefaultProduceTopic(topic),
		kgo.TransactionalID(txnID),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchCompression(codec),
		kgo.RecordDeliveryTimeout(deliveryTimeout),
	}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return &TxnProducer{g: g, cl: cl}, nil
}

// Begin starts a transaction.
func (p *TxnProducer) Begin() error {
	p.open = p.open[:0]
	return p.cl.BeginTransaction()
}

// Produce sends n events in the open transaction and waits for Kafka to
// take them (they are not readable committed until End commits).
func (p *TxnProducer) Produce(ctx context.Context, n int) error {
	recs := make([]*kgo.Record, n)
	for k := range recs {
		i := p.g.next.Add(1) - 1
		recs[k] = &kgo.Record{Value: p.g.Event(i)}
		p.open = append(p.open, i)
	}
	return p.cl.ProduceSync(ctx, recs...).FirstErr()
}

// Open is the indexes of the events of the transaction under way.
func (p *TxnProducer) Open() []int64 { return append([]int64(nil), p.open...) }

// End commits (or aborts) the open transaction and returns the indexes of
// its events.
func (p *TxnProducer) End(ctx context.Context, commit bool) ([]int64, error) {
	how := kgo.TryAbort
	if commit {
		how = kgo.TryCommit
	} else if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		return nil, err
	}
	if err := p.cl.EndTransaction(ctx, how); err != nil {
		return nil, fmt.Errorf("end transaction (commit=%v): %w", commit, err)
	}
	return append([]int64(nil), p.open...), nil
}

// Close closes the producer; an open transaction is left to the broker
// (it aborts it after its timeout).
func (p *TxnProducer) Close() { p.cl.Close() }

// TxnOptions shapes ProduceTransactional's traffic.
type TxnOptions struct {
	// Producers is how many transactional producers interleave. Default 3.
	Producers int
	// Size is how many events each transaction holds. Default 20.
	Size int
	// AbortOneIn aborts one transaction in this many (deterministically,
	// from the generator's seed). 0: none.
	AbortOneIn int
	// PlainEvery sends one non-transactional event after every this many
	// transactions of each producer. 0: none.
	PlainEvery int
	// Codec compresses every producer's batches. Default none.
	Codec kgo.CompressionCodec
}

// TxnReport says which events a ProduceTransactional run wrote.
type TxnReport struct {
	// Committed and Plain hold the indexes of the events a read-committed
	// reader must see (the ids are the generator's id of each), Aborted
	// those it must never see.
	Committed, Plain, Aborted []int64
}

// Readable is every index a read-committed reader must see.
func (r TxnReport) Readable() []int64 {
	return append(append([]int64(nil), r.Committed...), r.Plain...)
}

// ProduceTransactional sends at least limit events to topic through
// o.Producers concurrent transactional producers (transactional ids
// "<run id>-txn-<n>"), each transaction of o.Size events committed or, one
// in o.AbortOneIn, aborted, with plain events between, and reports which.
// The end of ctx stops it between transactions: one under way still ends.
func (g *Generator) ProduceTransactional(ctx context.Context, brokers []string, topic string, limit int64, o TxnOptions) (TxnReport, error) {
	if o.Producers <= 0 {
		o.Producers = 3
	}
	if o.Size <= 0 {
		o.Size = 20
	}
	if o.Codec == (kgo.CompressionCodec{}) {
		o.Codec = kgo.NoCompression()
	}
	plain, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return TxnReport{}, fmt.Errorf("kafka client: %w", err)
	}
	defer plain.Close()
	var (
		mu     sync.Mutex
		report TxnReport
		wg     sync.WaitGroup
		errs   = make([]error, o.Producers)
		txns   = int64(0)
	)
	for n := range o.Producers {
		wg.Go(func() {
			p, err := g.NewTxnProducer(brokers, topic, fmt.Sprintf("%s-txn-%d", g.RunID, n), o.Codec)
			if err != nil {
				errs[n] = err
				return
			}
			defer p.Close()
			for k := 0; ; k++ {
				mu.Lock()
				produced := int64(len(report.Committed) + len(report.Aborted) + len(report.Plain))
				t := txns
				txns++
				mu.Unlock()
				if produced >= limit || ctx.Err() != nil {
					return
				}
				commit := o.AbortOneIn <= 0 || newRand(g.Seed, t).next()%uint64(o.AbortOneIn) != 0
				ids, err := p.txn(context.WithoutCancel(ctx), o.Size, commit)
				if err != nil {
					errs[n] = err
					return
				}
				mu.Lock()
				if commit {
					report.Committed = append(report.Committed, ids...)
				} else {
					report.Aborted = append(report.Aborted, ids...)
				}
				mu.Unlock()
				if o.PlainEvery > 0 && k%o.PlainEvery == o.PlainEvery-1 {
					i := g.next.Add(1) - 1
					if err := plain.ProduceSync(context.WithoutCancel(ctx), &kgo.Record{Value: g.Event(i)}).FirstErr(); err != nil {
						errs[n] = err
						return
					}
					mu.Lock()
					report.Plain = append(report.Plain, i)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return report, errors.Join(errs...)
}

// txn runs one whole transaction of n events.
func (p *TxnProducer) txn(ctx context.Context, n int, commit bool) ([]int64, error) {
	if err := p.Begin(); err != nil {
		return nil, err
	}
	if err := p.Produce(ctx, n); err != nil {
		return nil, err
	}
	return p.End(ctx, commit)
}
