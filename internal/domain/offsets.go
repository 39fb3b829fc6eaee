package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Offsets maps a Kafka partition to an offset. As a start position it is the
// next offset to read; as an end position it is exclusive. In JSON its keys
// are the partitions' written form ("3", or "topic:3" with a topicPattern).
type Offsets map[Partition]int64

// Clone returns an independent copy (nil stays nil).
func (o Offsets) Clone() Offsets {
	if o == nil {
		return nil
	}
	return maps.Clone(o)
}

// Partitions returns the partitions in order (topic, then number).
func (o Offsets) Partitions() []Partition {
	return slices.SortedFunc(maps.Keys(o), ComparePartitions)
}

// Topics returns the topics of o's partitions in order ("" stands for a
// single-topic supervisor's own topic).
func (o Offsets) Topics() []string {
	seen := map[string]bool{}
	for p := range o {
		seen[p.Topic] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// OfTopic is the offsets of one topic's partitions.
func (o Offsets) OfTopic(topic string) Offsets {
	out := Offsets{}
	for p, v := range o {
		if p.Topic == topic {
			out[p] = v
		}
	}
	return out
}

// Equal reports whether both hold the same partitions at the same offsets.
func (o Offsets) Equal(other Offsets) bool {
	return maps.Equal(o, other)
}

// Sum is the total of all offsets; the difference of two sums over the same
// partitions is the number of offsets between them.
func (o Offsets) Sum() int64 {
	var n int64
	for _, v := range o {
		n += v
	}
	return n
}

// Reached reports whether o is at or past end on every partition of end.
func (o Offsets) Reached(end Offsets) bool {
	for p, e := range end {
		if o[p] < e {
			return false
		}
	}
	return true
}

// String renders "p0:12,p1:40" (or "orders:0:12,..." with a topicPattern)
// in partition order, for logs and summaries.
func (o Offsets) String() string {
	parts := make([]string, 0, len(o))
	for _, p := range o.Partitions() {
		parts = append(parts, fmt.Sprintf("%s:%d", p.Label(), o[p]))
	}
	return strings.Join(parts, ",")
}
