package segment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// TestCellRingKeepsLiveRows carves blocks of random sizes and checks that
// no cell of a block's rows, or of the previous block's last row, is
// handed out twice while they live.
func TestCellRingKeepsLiveRows(t *testing.T) {
	for _, per := range []int{1, 3, 9} {
		rng := rand.New(rand.NewPCG(uint64(per), 7))
		var ring cellRing
		var last []domain.Value // the previous block's last row
		lastMark := int64(-1)
		mark := int64(0)
		grew := 0
		for range 300 {
			n := 1 + rng.IntN(700)
			if rng.IntN(10) == 0 {
				n = 1 + rng.IntN(3000)
			}
			ring.startBlock(per)
			before := len(ring.buf)
			var rows [][]domain.Value
			for range n {
				cells := ring.next(per)
				require.Len(t, cells, per)
				for i := range cells {
					cells[i] = domain.LongValue(mark)
				}
				mark++
				rows = append(rows, cells)
			}
			if len(ring.buf) != before {
				grew++
			}
			for i, r := range rows {
				for _, c := range r {
					require.Equal(t, rows[i][0].Long(), c.Long(), "a row of the block was overwritten")
				}
			}
			for _, c := range last {
				require.Equal(t, lastMark, c.Long(), "the previous block's last row was overwritten")
			}
			last = rows[len(rows)-1]
			lastMark = last[0].Long()
		}
		require.Less(t, grew, 10, "per %d: the ring settles", per)
	}
}

// TestMergeRunsOfManyBlocks merges runs of several blocks each, so the
// readers' rings wrap and grow, against the merge in memory.
func TestMergeRunsOfManyBlocks(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	var files [][]domain.Row
	for i := range 3 {
		rows := makeRows(40_000+i*7_000, 1_700_000_000_000, uint64(i))
		path := filepath.Join(dir, fmt.Sprintf("%d.run", i))
		writeRun(t, path, benchSchema(), rows)
		paths, files = append(paths, path), append(files, rows)
	}
	for _, rollup := range []bool{false, true} {
		for _, maxOpen := range []int{3, 2} {
			got := mergeAll(t, paths, benchSchema(), rollup, maxOpen, t.TempDir())
			require.Equal(t, naiveMerge(t, files, benchSchema(), rollup), got, "rollup %v, maxOpen %d", rollup, maxOpen)
		}
	}
}

// BenchmarkMergeRuns is the publish merge: 8 runs of 50k rows (a
// consume's staging chunks) merged in one pass, rows handed to a no-op.
func BenchmarkMergeRuns(b *testing.B) {
	const files, perFile = 8, 50_000
	dir := b.TempDir()
	var paths []string
	for i := range files {
		path := filepath.Join(dir, fmt.Sprintf("%d.run", i))
		writeRun(b, path, benchSchema(), makeRows(perFile, 1_700_000_000_000, uint64(i)))
		paths = append(paths, path)
	}
	for _, rollup := range []bool{false, true} {
		b.Run(fmt.Sprintf("rollup=%v", rollup), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				err := Merge(context.Background(), paths, benchSchema(), rollup, files, b.TempDir(), func(domain.Row) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files*perFile), "ns/row")
		})
	}
}
