package workload

import (
	"context"
	"testing"
	"time"
)

// work for a while, so that the step has a duration to pace.
func busyFor(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

func TestPacerPausesOnlyWhileIngestionIsBusy(t *testing.T) {
	ctx := context.Background()
	tr := NewTracker(Limits{CompactShare: 0.5})
	c, err := tr.Begin(ctx, work(Consume, "c"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.End(nil)

	p := tr.Pacer()
	busyFor(20 * time.Millisecond)
	if err := p.Step(ctx); err != nil || p.Paused != 0 {
		t.Fatalf("paused %v (err %v) with no ingestion progress: want no pause", p.Paused, err)
	}

	c.Progress(nil, 1024, 0) // the consume reads
	busyFor(20 * time.Millisecond)
	if err := p.Step(ctx); err != nil {
		t.Fatal(err)
	}
	// Share 0.5: as long a pause as the work (≥ 20 ms).
	if p.Paused < 20*time.Millisecond || p.Paused > 200*time.Millisecond {
		t.Fatalf("paused %v after 20 ms of work while ingestion is busy: want about 20 ms", p.Paused)
	}

	if !tr.IngestBusy(time.Now()) || tr.IngestBusy(time.Now().Add(IngestBusyWindow)) {
		t.Fatal("ingestion is busy within IngestBusyWindow of its last progress, and only then")
	}

	// A compaction's own progress is not ingestion.
	tr2 := NewTracker(Limits{CompactShare: 0.5})
	k, err := tr2.Begin(ctx, work(Compact, "k"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.End(nil)
	k.Progress(nil, 65536, 0)
	if tr2.IngestBusy(time.Now()) {
		t.Fatal("a compaction's progress made ingestion busy")
	}
}

func TestPacerShareOneAndNilNeverPause(t *testing.T) {
	ctx := context.Background()
	tr := NewTracker(Limits{CompactShare: 1})
	c, err := tr.Begin(ctx, work(Publish, "p"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.End(nil)
	c.Progress(nil, 10, 0)
	p := tr.Pacer()
	busyFor(10 * time.Millisecond)
	if err := p.Step(ctx); err != nil || p.Paused != 0 {
		t.Fatalf("share 1 paused %v (err %v)", p.Paused, err)
	}
	var none *Tracker
	if err := none.Pacer().Step(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestPacerPauseEndsWithTheContext(t *testing.T) {
	tr := NewTracker(Limits{CompactShare: 0.01}) // a pause of 99 × the work, capped at maxPause
	c, err := tr.Begin(context.Background(), work(Consume, "c"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.End(nil)
	p := tr.Pacer()
	busyFor(20 * time.Millisecond)
	c.Progress(nil, 1024, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := p.Step(ctx); err == nil {
		t.Fatal("Step outlived its context")
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("Step returned %v after its context ended", d)
	}
}
