package storage

import (
	"context"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkLocalPut is the breakdown's storage-write stage: Put of a
// 16 MiB segment-sized object to local deep storage (temp file, buffered
// writes, fsync, rename, directory fsync), a new key each time.
func BenchmarkLocalPut(b *testing.B) {
	l, err := NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 16<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		key := "ds/seg-" + strconv.Itoa(n) + ".parquet"
		n++
		err := l.Put(context.Background(), key, func(w io.Writer) error {
			// In 64 KiB writes, as a Parquet writer flushes its pages.
			for off := 0; off < len(data); off += 64 << 10 {
				if _, err := w.Write(data[off : off+64<<10]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
