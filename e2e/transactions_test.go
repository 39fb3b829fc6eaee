package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// txnWaves produces transactional traffic as Kafka Streams or Flink write
// it: three producers interleaving transactions in every partition, one
// transaction in three aborted, plain records between, one wave per
// compression codec.
func (s *stack) txnWaves(gen *eventgen.Generator, perWave int64) eventgen.TxnReport {
	s.t.Helper()
	var all eventgen.TxnReport
	for _, codec := range []kgo.CompressionCodec{kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		r, err := gen.ProduceTransactional(context.Background(), s.brokers, s.name, perWave,
			eventgen.TxnOptions{Producers: 3, Size: 15, AbortOneIn: 3, PlainEvery: 2, Codec: codec})
		require.NoError(s.t, err)
		all.Committed = append(all.Committed, r.Committed...)
		all.Aborted = append(all.Aborted, r.Aborted...)
		all.Plain = append(all.Plain, r.Plain...)
	}
	require.NotEmpty(s.t, all.Aborted, "the waves must abort some transactions")
	return all
}

// heldOpen begins a transaction, writes n events in it and leaves it open.
// The broker would abort it after the producer's transaction timeout: it
// is long enough that only the test ends it.
func (s *stack) heldOpen(gen *eventgen.Generator, id string, n int) *eventgen.TxnProducer {
	s.t.Helper()
	p, err := gen.NewTxnProducer(s.brokers, s.name, id, kgo.NoCompression(), kgo.TransactionTimeout(10*time.Minute))
	require.NoError(s.t, err)
	s.t.Cleanup(p.Close)
	require.NoError(s.t, p.Begin())
	require.NoError(s.t, p.Produce(context.Background(), n))
	return p
}

// waitHeld waits until the supervisor's status shows partitions held by an
// open transaction (want true) or none (want false).
func (s *stack) waitHeld(spec domain.Spec, want bool) []domain.HeldPartition {
	s.t.Helper()
	var held []domain.HeldPartition
	require.Eventually(s.t, func() bool {
		held = s.status(spec).Held
		return (len(held) > 0) == want
	}, 45*time.Second, 200*time.Millisecond, "held partitions in status: want %v, have %v", want, held)
	return held
}

// idsOf names the generator's events.
func idsOf(gen *eventgen.Generator, idx ...[]int64) []string {
	var out []string
	for _, is := range idx {
		for _, i := range is {
			out = append(out, gen.ID(i))
		}
	}
	return out
}

// TestTransactionalTopicPublishesOnlyCommitted reads a topic written as a
// transactional upstream writes it, with maxParseExceptions 0: aborted
// transactions are never published, an open transaction holds its
// partitions (shown in status) across a checkpoint and is published once it
// commits, one aborted later never is, markers are neither rows nor
// unparseable, null and empty values are thrown away, and the stored
// offsets end at each partition's log end.
func TestTransactionalTopicPublishesOnlyCommitted(t *testing.T) {
	t.Parallel()
	s := newStack(t, 3, activities.Faults{})
	spec := s.spec(2)
	zero := int64(0)
	spec.TuningConfig.MaxParseExceptions = &zero
	gen := eventgen.New(s.name, 33)
	ctx := context.Background()

	wave1 := s.txnWaves(gen, 600)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)

	// A transaction held open across a checkpoint, with committed traffic
	// before it (so the checkpoint has something to publish) and behind
	// it: nothing at or past its first offset may be published.
	before := s.txnWaves(gen, 100)
	commitLater := s.heldOpen(gen, "commit-later", 30)
	behind := s.txnWaves(gen, 200)
	held := s.waitHeld(spec, true)
	n = s.checkpointUntilPublished(spec, n)
	published := s.publishedIDCounts(spec)
	for _, id := range idsOf(gen, commitLater.Open(), behind.Readable()) {
		require.Zero(t, published[id], "%s was published while the transaction before it was open", id)
	}
	stored, err := s.store.Offsets(ctx, spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(t, err)
	for _, h := range held {
		require.LessOrEqual(t, stored[h.Partition], h.Offset, "stored offsets past the last stable offset of %s", h.Partition)
		require.Greater(t, h.HighWatermark, h.Offset)
	}
	committedLater, err := commitLater.End(ctx, true)
	require.NoError(t, err)
	s.waitHeld(spec, false)

	// Another held open, then aborted: never published.
	abortLater := s.heldOpen(gen, "abort-later", 30)
	wave3 := s.txnWaves(gen, 200)
	s.waitHeld(spec, true)
	n = s.checkpointUntilPublished(spec, n)
	abortedLater, err := abortLater.End(ctx, false)
	require.NoError(t, err)

	// Tombstones and empty values: thrown away, not unparseable.
	plain, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...), kgo.DefaultProduceTopic(s.name))
	require.NoError(t, err)
	defer plain.Close()
	for range 4 {
		require.NoError(t, plain.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: nil}, &kgo.Record{Key: []byte("k"), Value: []byte{}}).FirstErr())
	}

	s.waitHeld(spec, false)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	// A group's read counts reach the supervisor with its progress reports,
	// the last when it finishes: the stopped supervisor's status has them
	// all.
	st := s.status(spec)

	want := idsOf(gen, wave1.Readable(), before.Readable(), behind.Readable(), committedLater, wave3.Readable())
	aborted := idsOf(gen, wave1.Aborted, before.Aborted, behind.Aborted, wave3.Aborted, abortedLater)
	t.Logf("%d events readable, %d aborted; read: %+v", len(want), len(aborted), st.Read)
	published = s.publishedIDCounts(spec)
	for _, id := range aborted {
		require.Zero(t, published[id], "%s of an aborted transaction was published", id)
	}
	s.requireExactlyOnceIDs(spec, want)
	stored, err = s.store.Offsets(ctx, spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(t, err)
	require.True(t, stored.Equal(s.latest(spec)), "stored offsets %v end at the log end %v, past the last markers", stored, s.latest(spec))

	require.Zero(t, st.Read.Unparseable, "markers and empty values are not unparseable")
	require.EqualValues(t, 8, st.Read.NoValue, "4 null and 4 empty values")
	require.GreaterOrEqual(t, st.Read.ThrownAway, st.Read.NoValue)
	require.Positive(t, st.Read.Markers)
	require.GreaterOrEqual(t, st.Read.Aborted, int64(len(aborted)), "every aborted record passed (some may be passed twice by a re-read)")
	require.Equal(t, domain.IsolationReadCommitted, st.IsolationLevel)
	require.True(t, slices.ContainsFunc(st.RecentErrors, func(e workflows.ErrorRecord) bool {
		return strings.Contains(e.Message, "held by an open transaction")
	}), "a hold is recorded in the recent errors: %v", st.RecentErrors)
}

// TestReadUncommittedReadsAbortedRecords: asked for, read_uncommitted
// publishes every data record, those of aborted transactions included,
// and still no marker.
func TestReadUncommittedReadsAbortedRecords(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	spec.IOConfig.ConsumerProperties = map[string]any{domain.PropIsolationLevel: domain.IsolationReadUncommitted}
	require.NoError(t, spec.Validate())
	gen := eventgen.New(s.name, 34)

	waves := s.txnWaves(gen, 300)
	run := s.startSupervisor(spec)
	s.checkpointUntilPublished(spec, 0)
	s.waitCaughtUp(spec)
	st := s.status(spec)
	s.stopAndWait(spec, run)

	require.Equal(t, domain.IsolationReadUncommitted, st.IsolationLevel)
	require.Zero(t, st.Read.Unparseable)
	require.Zero(t, st.Read.Aborted)
	require.Positive(t, st.Read.Markers)
	s.requireExactlyOnceIDs(spec, idsOf(gen, waves.Readable(), waves.Aborted))
}
