package lake_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
)

// liveHeapMiB is the heap still reachable after a full collection.
func liveHeapMiB() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// A worker's memory must not grow with the table's snapshots: it keeps the
// current metadata of each table it publishes, and nothing more per
// snapshot than the metadata file holds. Caching the metadata iceberg-go
// builds for a commit, which refers to the metadata it was built from
// (rather than the file parsed back), held ~80 MiB more after 300
// publications than after 100.
func TestLakeHeapDoesNotGrowWithSnapshots(t *testing.T) {
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			s := seq{id: i, rows: 2, hour: i % 24, start: domain.Offsets{domain.P(0): int64(2 * i)}, end: domain.Offsets{domain.P(0): int64(2*i + 2)}}
			_, err := e.store.Publish(ctx, e.write("wiki", s))
			require.NoError(t, err)
		}
	}
	publish(0, 100)
	at100 := liveHeapMiB()
	publish(100, 300)
	at300 := liveHeapMiB()
	runtime.KeepAlive(e) // the lake and its cache are what is measured
	t.Logf("live heap: %.1f MiB after 100 publications, %.1f MiB after 300", at100, at300)
	require.Less(t, at300-at100, 16.0, "live heap grew by %.1f MiB between 100 and 300 publications", at300-at100)
}
