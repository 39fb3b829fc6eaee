package chaos

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/eventgen"
	"handoff/workflows"
)

// txnTraffic is a transactional upstream running in the background: waves
// of interleaved transactions (one in three aborted, plain records
// between) until stopped, and now and then one transaction held open for
// a few seconds, across the checkpoints of the 2 s handoff period and an
// explicit one, committed or aborted in turn.
type txnTraffic struct {
	e          *env
	gen        *eventgen.Generator
	checkpoint func() // asks for a checkpoint while a transaction is held open
	mu         sync.Mutex
	report     eventgen.TxnReport
	held       int
}

func (e *env) txnTraffic(seed uint64) *txnTraffic {
	return &txnTraffic{e: e, gen: eventgen.New(e.name, seed)}
}

func (x *txnTraffic) add(r eventgen.TxnReport) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.report.Committed = append(x.report.Committed, r.Committed...)
	x.report.Aborted = append(x.report.Aborted, r.Aborted...)
	x.report.Plain = append(x.report.Plain, r.Plain...)
}

// run produces until ctx ends, then returns the first error.
func (x *txnTraffic) run(ctx context.Context) error {
	for wave := 0; ctx.Err() == nil; wave++ {
		r, err := x.gen.ProduceTransactional(ctx, x.e.brokers, x.e.name, 150,
			eventgen.TxnOptions{Producers: 3, Size: 10, AbortOneIn: 3, PlainEvery: 2, Codec: kgo.ZstdCompression()})
		x.add(r)
		if err != nil {
			return err
		}
		if wave%3 == 1 {
			if err := x.holdOpen(ctx, wave); err != nil {
				return err
			}
		}
	}
	return nil
}

// holdOpen keeps one transaction open for 3 s, checkpointing while it is,
// then commits it (or, every other time, aborts it).
func (x *txnTraffic) holdOpen(ctx context.Context, wave int) error {
	p, err := x.gen.NewTxnProducer(x.e.brokers, x.e.name, fmt.Sprintf("%s-held-%d", x.gen.RunID, wave), kgo.NoCompression())
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Begin(); err != nil {
		return err
	}
	if err := p.Produce(context.WithoutCancel(ctx), 20); err != nil {
		return err
	}
	x.checkpoint()
	select {
	case <-ctx.Done():
	case <-time.After(3 * time.Second):
	}
	commit := x.held%2 == 0
	x.held++
	idx, err := p.End(context.Background(), commit)
	if err != nil {
		return err
	}
	if commit {
		x.add(eventgen.TxnReport{Committed: idx})
	} else {
		x.add(eventgen.TxnReport{Aborted: idx})
	}
	return nil
}

// TestWorkerSIGKILLedUnderTransactionalProducer reads a transactional
// topic while the only worker is SIGKILLed again and again and
// transactions are held open across checkpoints: exactly the committed and
// plain events are published, once each, and no aborted one.
func TestWorkerSIGKILLedUnderTransactionalProducer(t *testing.T) {
	t.Parallel()
	kills := pick(3, 8)
	e := newEnv(t, envOptions{partitions: 3})
	spec := e.spec(2)
	x := e.txnTraffic(303)
	x.checkpoint = func() { // from the producing goroutine: no require
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.temporal.SignalWorkflow(ctx, workflows.SupervisorWorkflowID(spec.ID), "", workflows.SignalCheckpoint, workflows.CheckpointSignal{}); err != nil {
			t.Logf("checkpoint while a transaction is open: %v", err)
		}
	}
	r := newRand(t)

	run := e.startSupervisor(spec)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.run(ctx) }()
	for i := range kills {
		w := e.startWorker(fmt.Sprint(i), true)
		time.Sleep(between(r, 2*time.Second, 6*time.Second))
		e.sigkill(spec, w)
	}
	e.startWorker("last", true)
	e.awaitTakeovers(spec)
	time.Sleep(3 * time.Second)
	stop()
	require.NoError(t, <-done)
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)

	x.mu.Lock()
	want, aborted := x.report.Readable(), x.report.Aborted
	x.mu.Unlock()
	t.Logf("%d committed or plain events, %d aborted, %d transactions held open", len(want), len(aborted), x.held)
	seen, _ := e.publishedIDCounts(spec)
	for _, i := range aborted {
		require.Zero(t, seen[x.gen.ID(i)], "%s of an aborted transaction was published", x.gen.ID(i))
	}
	ids := make([]string, len(want))
	for k, i := range want {
		ids[k] = x.gen.ID(i)
	}
	require.GreaterOrEqual(t, e.report.faultCount(), kills)
	e.verifyIDs(spec, ids)
}
