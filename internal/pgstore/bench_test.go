package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
)

// BenchmarkPublishTransaction times one publish: lock, idempotency check,
// offsets compare-and-swap over 4 partitions, 2 segment rows, the offsets
// and the sequence record, committed (a real Postgres; testenv starts one).
func BenchmarkPublishTransaction(b *testing.B) {
	s, ctx := newStore(b), context.Background()
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	start := domain.Offsets{domain.P(0): 0, domain.P(1): 0, domain.P(2): 0, domain.P(3): 0}
	seq := 0
	for b.Loop() {
		end := domain.Offsets{}
		for p, o := range start {
			end[p] = o + 1000
		}
		name := fmt.Sprintf("sup_0_%d", seq)
		p := pgstore.Publication{
			SequenceName: name, SupervisorID: "sup", DataSource: "ds", Topic: "topic", SequenceID: seq,
			Start: start, End: end, Rows: 4000,
		}
		for i := range 2 {
			p.Segments = append(p.Segments, pgstore.Segment{
				ID: fmt.Sprintf("ds_%s_%d", name, i), DataSource: "ds",
				IntervalStart: t0.Add(time.Duration(i) * time.Hour), IntervalEnd: t0.Add(time.Duration(i+1) * time.Hour),
				Version: name, SequenceName: name, Rows: 2000, Bytes: 1 << 20, URI: "file:///x/" + name, Checksum: "sha256:00",
			})
		}
		already, err := s.Publish(ctx, p)
		if err != nil || already {
			b.Fatalf("publish %s: already %v, %v", name, already, err)
		}
		start, seq = end, seq+1
	}
}
