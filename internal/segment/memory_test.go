package segment

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// mergeHeapBound is the most heap Merge may hold in TestMergeMemoryBounded.
// Its 2M input rows would take ~700 MiB as domain.Rows. A merge holds, per
// open file, one decoded batch and a page per column, plus a writer's row
// group during the passes that write temporary files; measured: ~40 MiB
// in use while emitting, ~60 MiB at most (garbage not yet collected
// included).
const mergeHeapBound = 128 << 20

// Merging 20 files × 100k rows with 4 open at once (three passes) keeps
// the heap far below what the rows would take.
func TestMergeMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and merges 2M rows")
	}
	const files, perFile, maxOpen = 20, 100_000, 4
	dir := t.TempDir()
	var paths []string
	for i := range files {
		rows := makeRows(perFile, 1_700_000_000_000, uint64(i))
		paths = append(paths, writeSegment(t, dir, fmt.Sprintf("%02d.parquet", i), benchSchema(), rows))
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse

	// emit samples the final pass; the sampler also covers the passes
	// that write temporary files.
	var (
		mu      sync.Mutex
		peakAll uint64
		stop    = make(chan struct{})
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				mu.Lock()
				peakAll = max(peakAll, ms.HeapInuse)
				mu.Unlock()
			}
		}
	}()
	var n int64
	var peakEmit uint64
	var prev domain.Row
	start := time.Now()
	err := Merge(context.Background(), paths, benchSchema(), false, maxOpen, t.TempDir(), func(r domain.Row) error {
		if n > 0 && domain.CompareRows(prev, r, benchSchema().Dims) > 0 {
			return fmt.Errorf("row %d out of order", n)
		}
		prev = cloneRow(r)
		if n%10_000 == 0 {
			runtime.ReadMemStats(&ms)
			peakEmit = max(peakEmit, ms.HeapInuse)
		}
		n++
		return nil
	})
	elapsed := time.Since(start)
	close(stop)
	<-done
	require.NoError(t, err)
	require.Equal(t, int64(files*perFile), n)
	t.Logf("merged %d rows in %v; HeapInuse before %.1f MiB, peak while emitting %.1f MiB, peak over all passes %.1f MiB",
		n, elapsed, mib(base), mib(peakEmit), mib(peakAll))
	require.Less(t, peakEmit, uint64(mergeHeapBound))
	require.Less(t, peakAll, uint64(mergeHeapBound))
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// Writing allocates per page and per row group, never per row: the column
// batch and the views of the rows' strings are reused. (Measured: about 3
// allocations per 1024 rows, from page flushes.)
func TestWriteAllocatesNothingPerRow(t *testing.T) {
	rows := makeRows(200_000, 1_700_000_000_000, 1)
	w, err := NewWriter(io.Discard, benchSchema())
	require.NoError(t, err)
	require.NoError(t, w.Write(rows[:100_000]...)) // buffers grow to their page sizes
	next := 100_000
	allocs := testing.AllocsPerRun(50, func() {
		require.NoError(t, w.Write(rows[next:next+batchRows]...))
		next += batchRows
	})
	require.Less(t, allocs, float64(batchRows/64), "allocations per %d rows", batchRows)
}
