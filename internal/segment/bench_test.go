package segment

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	pzstd "github.com/parquet-go/parquet-go/compress/zstd"

	"handoff/internal/domain"
)

// rawBytes is the input volume of rows, for MB/s: 8 bytes per number,
// the length of each string.
func rawBytes(rows []domain.Row) int64 {
	var n int64
	for _, r := range rows {
		n += 8
		for _, v := range append(r.Dims[:len(r.Dims):len(r.Dims)], r.Metrics...) {
			if v.S != "" {
				n += int64(len(v.S))
			} else {
				n += 8
			}
		}
	}
	return n
}

func BenchmarkWrite(b *testing.B) {
	rows := makeRows(100_000, 1_700_000_000_000, 1)
	var buf bytes.Buffer
	info, err := writeAll(&buf, benchSchema(), rows, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(rawBytes(rows))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if _, err := writeAll(&buf, benchSchema(), rows, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(info.Bytes), "file-bytes")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
}

func BenchmarkRead(b *testing.B) {
	rows := makeRows(100_000, 1_700_000_000_000, 1)
	path := writeSegment(b, b.TempDir(), "s.parquet", benchSchema(), rows)
	b.SetBytes(rawBytes(rows))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
}

// BenchmarkMerge merges 8 files of 50k rows: in one pass (maxOpen 8) and in
// two (maxOpen 4, i.e. half the rows written to temporary files and read
// again), with and without rollup.
func BenchmarkMerge(b *testing.B) {
	const files, perFile = 8, 50_000
	dir := b.TempDir()
	var paths []string
	var raw int64
	for i := range files {
		rows := makeRows(perFile, 1_700_000_000_000, uint64(i))
		raw += rawBytes(rows)
		paths = append(paths, writeSegment(b, dir, fmt.Sprintf("%d.parquet", i), benchSchema(), rows))
	}
	for _, maxOpen := range []int{8, 4} {
		for _, rollup := range []bool{false, true} {
			b.Run(fmt.Sprintf("maxOpen=%d/rollup=%v", maxOpen, rollup), func(b *testing.B) {
				b.SetBytes(raw)
				b.ReportAllocs()
				tmp := b.TempDir()
				var out int
				for b.Loop() {
					out = 0
					err := Merge(context.Background(), paths, benchSchema(), rollup, maxOpen, tmp, func(domain.Row) error {
						out++
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files*perFile), "ns/row")
				b.ReportMetric(float64(out), "rows-out")
			})
		}
	}
}

func BenchmarkWriteRun(b *testing.B) {
	rows := makeRows(100_000, 1_700_000_000_000, 1)
	var buf bytes.Buffer
	write := func() Info {
		buf.Reset()
		w, err := NewRunWriter(&buf, benchSchema())
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Write(rows...); err != nil {
			b.Fatal(err)
		}
		info, err := w.Close()
		if err != nil {
			b.Fatal(err)
		}
		return info
	}
	info := write()
	b.SetBytes(rawBytes(rows))
	b.ReportAllocs()
	for b.Loop() {
		write()
	}
	b.ReportMetric(float64(info.Bytes), "file-bytes")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
}

// pageRecorder is a codec that keeps a copy of every page it is given
// and "compresses" it to itself: it collects a segment's uncompressed
// pages for BenchmarkZstdPages.
type pageRecorder struct {
	pzstd.Codec
	pages [][]byte
}

func (r *pageRecorder) Encode(dst, src []byte) ([]byte, error) {
	r.pages = append(r.pages, bytes.Clone(src))
	return append(dst[:0], src...), nil
}

// BenchmarkZstdPages is the breakdown's compression stage: the segment
// codec compressing the pages of 100,000 rows (the Parquet encoder's
// output for them, captured once).
func BenchmarkZstdPages(b *testing.B) {
	rows := makeRows(100_000, 1_700_000_000_000, 1)
	rec := &pageRecorder{}
	sw, err := newWriter(io.Discard, benchSchema(), nil, rec)
	if err != nil {
		b.Fatal(err)
	}
	if err := sw.Write(rows...); err != nil {
		b.Fatal(err)
	}
	if _, err := sw.Close(); err != nil {
		b.Fatal(err)
	}
	var in, out int64
	for _, p := range rec.pages {
		in += int64(len(p))
	}
	b.SetBytes(in)
	b.ReportAllocs()
	var dst []byte
	for b.Loop() {
		out = 0
		for _, p := range rec.pages {
			var err error
			if dst, err = codec.Encode(dst, p); err != nil {
				b.Fatal(err)
			}
			out += int64(len(dst))
		}
	}
	b.ReportMetric(float64(len(rec.pages)), "pages")
	b.ReportMetric(float64(in)/float64(out), "ratio")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
}
