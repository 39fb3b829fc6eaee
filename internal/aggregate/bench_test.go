package aggregate

import (
	"strconv"
	"testing"

	"handoff/internal/domain"
)

func BenchmarkInitLong(b *testing.B) {
	m := metric(domain.MetricLongSum)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Init(m, "12345", true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInitSketch(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Init(unique, "user-123456", true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCombineLong(b *testing.B) {
	m := metric(domain.MetricLongSum)
	acc := domain.LongValue(0)
	b.ReportAllocs()
	for b.Loop() {
		acc, _ = Combine(m, acc, domain.LongValue(3))
	}
}

// BenchmarkSketchMerge merges single values into one decoded sketch, the
// rollup path of a hyperUnique metric.
func BenchmarkSketchMerge(b *testing.B) {
	vals := make([]domain.Value, 1<<16)
	for i := range vals {
		vals[i], _ = Init(unique, strconv.Itoa(i), true)
	}
	var s Sketch
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.Merge(vals[i%len(vals)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCombineSketch combines one value into an encoded sketch of about
// 1000 values: the cost per row were rollup to re-encode sketches.
func BenchmarkCombineSketch(b *testing.B) {
	var s Sketch
	for i := range 1000 {
		v, _ := Init(unique, strconv.Itoa(i), true)
		if err := s.Merge(v); err != nil {
			b.Fatal(err)
		}
	}
	acc := s.Value()
	one, _ := Init(unique, "one more", true)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Combine(unique, acc, one); err != nil {
			b.Fatal(err)
		}
	}
}
