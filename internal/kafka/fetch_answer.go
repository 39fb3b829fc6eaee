package kafka

import "fmt"

// fetchAnswer is a Fetch response (versions 4 to 11) read in place: the
// records of each partition stay slices of the response's bytes.
type fetchAnswer struct {
	errorCode int16
	topics    []topicAnswer
}

type topicAnswer struct {
	topic      string
	partitions []partitionAnswer
}

// partitionAnswer is one partition's part of a fetch answer.
type partitionAnswer struct {
	partition        int32
	errorCode        int16
	highWatermark    int64
	lastStableOffset int64
	aborted          []abortedTxn
	records          []byte // record batches, the last possibly cut short
}

// abortedTxn is an aborted transaction overlapping the fetched range: its
// producer and the offset of its first record.
type abortedTxn struct {
	producer    int64
	firstOffset int64
}

// minFetchVersion is the first Fetch version with isolation levels, the
// last stable offset and aborted transactions (Kafka 0.11).
const minFetchVersion = 4

// parseFetchAnswer reads a Fetch response body of the given version (the
// bytes after the correlation id).
func parseFetchAnswer(body []byte, version int16) (fetchAnswer, error) {
	if version < minFetchVersion || version > 11 {
		return fetchAnswer{}, fmt.Errorf("fetch version %d: want 4 to 11 (Kafka 0.11 or later)", version)
	}
	w := &wire{b: body}
	var a fetchAnswer
	w.int32() // throttle time
	if version >= 7 {
		a.errorCode = w.int16()
		w.int32() // session id
	}
	a.topics = make([]topicAnswer, w.array(6))
	for i := range a.topics {
		t := &a.topics[i]
		t.topic = w.string16()
		t.partitions = make([]partitionAnswer, w.array(30))
		for j := range t.partitions {
			readPartitionAnswer(w, version, &t.partitions[j])
		}
	}
	if w.err != nil {
		return fetchAnswer{}, fmt.Errorf("read fetch answer: %w", w.err)
	}
	return a, nil
}

func readPartitionAnswer(w *wire, version int16, p *partitionAnswer) {
	p.partition = w.int32()
	p.errorCode = w.int16()
	p.highWatermark = w.int64()
	p.lastStableOffset = w.int64()
	if version >= 5 {
		w.int64() // log start offset
	}
	if n := w.array(16); n > 0 {
		p.aborted = make([]abortedTxn, n)
		for k := range p.aborted {
			p.aborted[k] = abortedTxn{producer: w.int64(), firstOffset: w.int64()}
		}
	}
	if version >= 11 {
		w.int32() // preferred read replica
	}
	if n := w.int32(); n > 0 {
		p.records = w.take(int(n), "records")
	}
}
