package kafka

import (
	"cmp"
	"slices"
)

// abortFilter tells, under read committed, which transactional batches of
// one fetch belong to aborted transactions, from the list the broker
// returns with the fetch (each aborted transaction's producer and first
// offset), as Kafka's own consumer does: walking the batches in offset
// order, a producer's transaction counts as aborted from its first offset
// on, until the producer's abort marker. So one producer may have several
// transactions in one fetch, committed and aborted in turn, and only the
// aborted ones' batches are left out.
type abortFilter struct {
	on      bool
	pending []abortedTxn // not yet reached, by first offset
	aborted []int64      // producers inside an aborted transaction
}

func newAbortFilter(iso Isolation, txns []abortedTxn) *abortFilter {
	f := &abortFilter{on: iso == ReadCommitted && len(txns) > 0}
	if f.on {
		f.pending = slices.Clone(txns)
		slices.SortFunc(f.pending, func(a, b abortedTxn) int {
			return cmp.Compare(a.firstOffset, b.firstOffset)
		})
	}
	return f
}

// upTo makes every aborted transaction that began at or before offset
// current.
func (f *abortFilter) upTo(offset int64) {
	for len(f.pending) > 0 && f.pending[0].firstOffset <= offset {
		if id := f.pending[0].producer; !slices.Contains(f.aborted, id) {
			f.aborted = append(f.aborted, id)
		}
		f.pending = f.pending[1:]
	}
}

// drops reports whether the transactional batch of producer whose last
// offset is last belongs to an aborted transaction.
func (f *abortFilter) drops(producer, last int64) bool {
	if !f.on {
		return false
	}
	f.upTo(last)
	return slices.Contains(f.aborted, producer)
}

// marker sees producer's marker at offset: an abort marker ends its
// aborted transaction.
func (f *abortFilter) marker(producer, offset int64, abort bool) {
	if !f.on {
		return
	}
	f.upTo(offset)
	if abort {
		f.aborted = slices.DeleteFunc(f.aborted, func(id int64) bool { return id == producer })
	}
}
