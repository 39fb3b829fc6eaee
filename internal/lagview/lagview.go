// Package lagview turns what is known of a supervisor's partitions (the
// committed, current and latest offsets, each learnt at its own moment and
// from its own source) into one consistent view, committed ≤ current ≤
// latest, with two named distances per partition and summed:
//
//   - lag = latest − current: records in Kafka the groups have not read
//     yet (Apache Druid's definition of a supervisor's lag);
//   - unpublished = current − committed: records read, not yet published
//     (they are in open or publishing sequences).
//
// Latest offsets are read from Kafka now and then, current ones are
// reported as the groups read: a latest read before a current can be below
// it. The view then shows latest at current and marks the partition, so no
// reader sees a consumer ahead of the log's end. The status command, the
// supervisor's details in the Temporal UI and the worker's /metrics all
// take their figures from here. Pure: no I/O, no clock.
package lagview

import (
	"maps"
	"time"

	"handoff/internal/domain"
)

// Input is what is known of a supervisor's partitions.
type Input struct {
	// Committed is where each partition's published data ends: its stored
	// offset or, before its first publish, where reading began (Base).
	Committed domain.Offsets
	// Current is how far the groups have read: the next offset to read. A
	// partition without one (or with one below Committed, a report older
	// than the last publish) is taken to be at Committed.
	Current domain.Offsets
	// Latest is each partition's log end (the next offset Kafka assigns),
	// as read at LatestAt (zero: unknown).
	Latest   domain.Offsets
	LatestAt time.Time
}

// Partition is one partition's consistent offsets and distances.
type Partition struct {
	Partition domain.Partition `json:"partition"`
	Committed int64            `json:"committed"`
	Current   int64            `json:"current"`
	Latest    int64            `json:"latest"`
	// LatestRaised: the latest offset as read was below Current (it was
	// read before the groups got there), so Latest shows Current.
	LatestRaised bool `json:"latestRaised,omitempty"`
	// Lag is Latest − Current: in Kafka, not read yet.
	Lag int64 `json:"lag"`
	// Unpublished is Current − Committed: read, not yet published.
	Unpublished int64 `json:"unpublished"`
}

// View is every partition that has a latest offset and a committed or
// current one, in partition order, with the sums.
type View struct {
	Partitions  []Partition `json:"partitions"`
	Lag         int64       `json:"lag"`
	Unpublished int64       `json:"unpublished"`
	LatestAt    time.Time   `json:"latestAt,omitzero"`
}

// Compute makes the view consistent: current is raised to committed and
// latest to current. A partition without a latest offset, or with neither
// a committed nor a current one, has no lag to speak of and is left out.
func Compute(in Input) View {
	v := View{LatestAt: in.LatestAt}
	for _, p := range in.Latest.Partitions() {
		committed, hasCommitted := in.Committed[p]
		current, hasCurrent := in.Current[p]
		switch {
		case !hasCommitted && !hasCurrent:
			continue
		case !hasCommitted:
			committed = current // nothing known to be unpublished
		case !hasCurrent:
			current = committed
		}
		current = max(current, committed)
		latest := in.Latest[p]
		x := Partition{Partition: p, Committed: committed, Current: current, Latest: max(latest, current), LatestRaised: latest < current}
		x.Lag, x.Unpublished = x.Latest-x.Current, x.Current-x.Committed
		v.Partitions = append(v.Partitions, x)
		v.Lag += x.Lag
		v.Unpublished += x.Unpublished
	}
	return v
}

// Lags is each partition's lag.
func (v View) Lags() map[domain.Partition]int64 {
	return v.each(func(x Partition) int64 { return x.Lag })
}

// UnpublishedByPartition is each partition's unpublished count.
func (v View) UnpublishedByPartition() map[domain.Partition]int64 {
	return v.each(func(x Partition) int64 { return x.Unpublished })
}

// Current is each partition's current offset as the view has it.
func (v View) Current() domain.Offsets {
	return domain.Offsets(v.each(func(x Partition) int64 { return x.Current }))
}

// Latest is each partition's latest offset as the view has it (raised to
// current where it was below).
func (v View) Latest() domain.Offsets {
	return domain.Offsets(v.each(func(x Partition) int64 { return x.Latest }))
}

// Raised lists the partitions whose latest offset was raised to current.
func (v View) Raised() []domain.Partition {
	var out []domain.Partition
	for _, x := range v.Partitions {
		if x.LatestRaised {
			out = append(out, x.Partition)
		}
	}
	return out
}

func (v View) each(f func(Partition) int64) map[domain.Partition]int64 {
	out := make(map[domain.Partition]int64, len(v.Partitions))
	for _, x := range v.Partitions {
		out[x.Partition] = f(x)
	}
	return out
}

// Base is where each partition's unpublished records begin: its committed
// offset or, for a partition with none yet, the start of the first of
// sequences that holds it (sequences in the order they were recorded).
func Base(committed domain.Offsets, sequenceStarts ...domain.Offsets) domain.Offsets {
	base := domain.Offsets{}
	for _, start := range sequenceStarts {
		for p, o := range start {
			if _, ok := base[p]; !ok {
				base[p] = o
			}
		}
	}
	maps.Copy(base, committed)
	return base
}

// Furthest merges reports of how far partitions were read: the highest
// offset of each partition any of them has (nil when none has any).
func Furthest(reports ...domain.Offsets) domain.Offsets {
	var out domain.Offsets
	for _, r := range reports {
		for p, o := range r {
			if out == nil {
				out = domain.Offsets{}
			}
			if cur, ok := out[p]; !ok || o > cur {
				out[p] = o
			}
		}
	}
	return out
}

// Overlay is reported with each of its partitions the view holds (raised,
// to be consistent) taken from consistent, e.g. a view's Current() over
// the current offsets as reported: a partition nothing reported on stays
// out.
func Overlay(reported, consistent domain.Offsets) domain.Offsets {
	out := reported.Clone()
	for p := range out {
		if o, ok := consistent[p]; ok {
			out[p] = o
		}
	}
	return out
}
