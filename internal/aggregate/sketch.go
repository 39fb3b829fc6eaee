package aggregate

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/axiomhq/hyperloglog"

	"handoff/internal/domain"
)

// Precision is the HyperLogLog precision of every hyperUnique sketch.
// Changing it makes new sketches unmergeable with stored ones.
const Precision = 14

// denseBytes is a dense sketch's register array, the most a sketch holds.
const denseBytes = 1 << Precision

// singles recycles the sketches Init builds: one value never leaves the
// sparse representation, so Reset leaves each ready for the next row.
var singles = sync.Pool{New: func() any {
	sk, err := hyperloglog.NewSketch(Precision, true)
	if err != nil {
		panic(err) // Precision is a valid constant
	}
	return sk
}}

// sketchOf is the serialized sketch of one value.
func sketchOf(raw string) domain.Value {
	sk := singles.Get().(*hyperloglog.Sketch)
	defer singles.Put(sk)
	sk.Reset()
	sk.Insert([]byte(raw))
	var buf [32]byte
	b, err := sk.AppendBinary(buf[:0])
	if err != nil {
		panic(err) // only a zero-value sketch fails, and sk is not one
	}
	return domain.BytesValue(b)
}

func decode(v domain.Value) (*hyperloglog.Sketch, error) {
	var sk hyperloglog.Sketch
	if err := sk.UnmarshalBinary([]byte(v.S)); err != nil {
		return nil, fmt.Errorf("decode sketch: %w", err)
	}
	return &sk, nil
}

func combineSketches(m domain.MetricSpec, a, b domain.Value) (domain.Value, error) {
	var s Sketch
	if err := s.Merge(a); err != nil {
		return domain.Value{}, fmt.Errorf("metric %q: %w", m.Name, err)
	}
	if err := s.Merge(b); err != nil {
		return domain.Value{}, fmt.Errorf("metric %q: %w", m.Name, err)
	}
	return s.Value(), nil
}

// Estimate is a hyperUnique value's distinct-count estimate (null gives 0).
func Estimate(v domain.Value) (uint64, error) {
	if v.Null {
		return 0, nil
	}
	sk, err := decode(v)
	if err != nil {
		return 0, err
	}
	return sk.Estimate(), nil
}

// Sketch is a decoded hyperUnique value that many values merge into, so a
// growing sketch is decoded and encoded once, not once per merged value.
// Its zero value is empty (null).
type Sketch struct {
	hll   *hyperloglog.Sketch
	bytes int
}

// Merge adds a serialized sketch; null adds nothing.
func (s *Sketch) Merge(v domain.Value) error {
	if v.Null {
		return nil
	}
	sk, err := decode(v)
	if err != nil {
		return err
	}
	if s.hll == nil {
		s.hll, s.bytes = sk, len(v.S)
		return nil
	}
	if err := s.hll.Merge(sk); err != nil {
		return fmt.Errorf("merge sketch: %w", err)
	}
	s.bytes = min(s.bytes+len(v.S), denseBytes)
	return nil
}

// Value serializes the sketch, null if nothing was merged. It compacts the
// sparse form first (Estimate does), so the bytes are the same whatever
// order the values were merged in.
func (s *Sketch) Value() domain.Value {
	if s.hll == nil {
		return domain.NullValue()
	}
	s.hll.Estimate()
	b, err := s.hll.MarshalBinary()
	if err != nil {
		panic(err) // only a zero-value sketch fails, and a decoded one is not
	}
	// b is ours alone: hand it over as the string without a copy.
	return domain.Value{S: unsafe.String(unsafe.SliceData(b), len(b))}
}

// Bytes estimates the heap the decoded sketch holds: about the encoded
// bytes merged into it, at most a dense register array.
func (s *Sketch) Bytes() int {
	if s.hll == nil {
		return 0
	}
	return s.bytes + sketchOverhead
}

// sketchOverhead is the fixed heap of a decoded sketch (struct, sparse
// set and list headers).
const sketchOverhead = 256
