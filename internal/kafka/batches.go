package kafka

import "fmt"

// readBatches appends the data records of one partition's answer to res,
// in offset order, batch by batch as Kafka's own consumer does:
//
//   - a control batch (a transaction's commit or abort marker) is passed,
//     never a record;
//   - under read committed, a transactional batch whose producer's
//     transaction aborted is passed too (abortFilter), and nothing at or
//     past the last stable offset is kept;
//   - passing a batch, or reading it to its end, moves res.Next past its
//     last offset (never past the request's Stop), so a fetch that met only
//     markers or aborted records still moves on.
func readBatches(p *partitionAnswer, r FetchRequest, bs *batches, res *FetchResult) error {
	rd := batchReader{req: r, res: res, aborted: newAbortFilter(r.Isolation, p.aborted)}
	if r.Isolation == ReadCommitted {
		rd.end = p.lastStableOffset // -1: the broker did not say
	}
	read := 0
	for {
		b, legacy, ok, err := bs.next()
		if err != nil {
			return fmt.Errorf("%w (after offset %d)", err, res.Next-1)
		}
		if !ok {
			break
		}
		read++
		var done bool
		if legacy != nil {
			done, err = rd.legacy(legacy)
		} else {
			done, err = rd.batch(&b)
		}
		if err != nil || done {
			return err
		}
	}
	if read == 0 && len(p.records) > 0 {
		return fmt.Errorf("the batch at offset %d is larger than the fetch's max bytes and came cut short", r.Offset)
	}
	return nil
}

// batchReader reads one fetch's batches into its result.
type batchReader struct {
	req     FetchRequest
	res     *FetchResult
	end     int64 // read committed: the last stable offset (≤ 0: none known)
	aborted *abortFilter
}

// beyond: offset is at or past where this fetch must stop reading.
func (rd *batchReader) beyond(offset int64) bool {
	return (rd.req.Stop > 0 && offset >= rd.req.Stop) || (rd.end > 0 && offset >= rd.end)
}

// batch reads one v2 batch; done: nothing after it may be read.
func (rd *batchReader) batch(b *recordBatch) (done bool, err error) {
	if b.control() {
		return rd.control(b)
	}
	res := rd.res
	if b.transactional() && rd.aborted.drops(b.producer, b.lastOffset) {
		err = b.each(func(r *batchRecord) bool {
			if done = rd.beyond(r.offset); !done && r.offset >= rd.req.Offset {
				res.Aborted++
			}
			return done
		})
		if err == nil && !done {
			rd.pass(b.lastOffset)
		}
		return done, err
	}
	err = b.each(func(r *batchRecord) bool {
		if r.offset < rd.req.Offset {
			return false
		}
		if rd.beyond(r.offset) {
			done = true
			return true
		}
		res.Records = append(res.Records, Record{Offset: r.offset, Time: r.time, Key: r.key, Value: r.value, Headers: r.headers})
		res.Next = r.offset + 1
		return false
	})
	if err == nil && !done {
		rd.pass(b.lastOffset) // records compacted away at its end included
	}
	return done, err
}

// control passes a control batch, telling the filter of an abort marker.
func (rd *batchReader) control(b *recordBatch) (done bool, err error) {
	err = b.each(func(r *batchRecord) bool {
		if rd.beyond(r.offset) {
			done = true
			return true
		}
		rd.aborted.marker(b.producer, r.offset, isAbortMarker(r.key))
		if r.offset >= rd.req.Offset {
			rd.res.Markers++
		}
		return false
	})
	if err == nil && !done {
		rd.pass(b.lastOffset)
	}
	return done, err
}

// isAbortMarker reads a control record's key: version, then type (0 abort,
// 1 commit).
func isAbortMarker(key []byte) bool {
	return len(key) >= 4 && key[2] == 0 && key[3] == 0
}

// legacy reads a message set entry of the formats before 0.11, which know
// no transactions.
func (rd *batchReader) legacy(entry []byte) (done bool, err error) {
	res := rd.res
	err = legacyRecords(entry, func(r *batchRecord) bool {
		if r.offset < rd.req.Offset {
			return false
		}
		if rd.beyond(r.offset) {
			done = true
			return true
		}
		res.Records = append(res.Records, Record{Offset: r.offset, Time: r.time, Key: r.key, Value: r.value})
		res.Next = r.offset + 1
		return false
	})
	return done, err
}

// pass moves Next past offset (never past Stop).
func (rd *batchReader) pass(offset int64) {
	next := offset + 1
	if rd.req.Stop > 0 {
		next = min(next, rd.req.Stop)
	}
	rd.res.Next = max(rd.res.Next, next)
}
