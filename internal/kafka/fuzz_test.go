package kafka

import (
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// seedBatch is a valid v2 batch of n records from base, built by franz-go's
// kmsg, for the fuzzers to start from.
func seedBatch(base int64, n int, producer int64, attrs int16) []byte {
	var recs []byte
	for i := range n {
		r := kmsg.Record{OffsetDelta: int32(i), Key: []byte("k"), Value: []byte(`{"a":1}`),
			Headers: []kmsg.Header{{Key: "h", Value: []byte("v")}}}
		if attrs&attrControl != 0 {
			r.Key, r.Value, r.Headers = []byte{0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0}, nil
		}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{FirstOffset: base, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(n - 1),
		ProducerID: producer, NumRecords: int32(n), Records: recs, FirstTimestamp: 1, MaxTimestamp: 2}
	enc := b.AppendTo(nil)
	b.Length = int32(len(enc) - 12)
	enc = b.AppendTo(nil)
	b.CRC = int32(crc32.Checksum(enc[21:], castagnoli))
	return b.AppendTo(nil)
}

func seedBatches() []byte {
	out := seedBatch(0, 3, -1, 0)
	out = append(out, seedBatch(3, 2, 5, attrTransactional)...)
	out = append(out, seedBatch(5, 1, 5, attrTransactional|attrControl)...)
	return append(out, seedBatch(6, 2, 6, attrTransactional)...)
}

// No fetch answer, however malformed, may panic the reader: every length
// and count is checked against what is left.
func FuzzReadFetchAnswer(f *testing.F) {
	f.Add([]byte{}, int16(11), int64(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1}, int16(11), int64(0))
	f.Fuzz(func(t *testing.T, body []byte, version int16, offset int64) {
		raw := &rawAnswer{version: version, buf: &body}
		for _, iso := range []Isolation{ReadCommitted, ReadUncommitted} {
			out, err := readAnswer(raw, []FetchRequest{{Topic: "t", Offset: offset, Isolation: iso}, {Topic: "t", Partition: 1, Offset: offset, Isolation: iso}})
			for _, f := range out {
				if err == nil && f.err == nil && f.res.Next < offset {
					t.Fatalf("Next %d went back from %d", f.res.Next, offset)
				}
				f.res.Recycle()
			}
		}
	})
}

// Record batches, however malformed, read without a panic.
func FuzzRecordBatches(f *testing.F) {
	f.Add([]byte{}, int64(0))
	f.Add(seedBatches(), int64(0))
	f.Add(seedBatches(), int64(4))
	f.Fuzz(func(t *testing.T, records []byte, offset int64) {
		p := &partitionAnswer{records: records, lastStableOffset: -1, aborted: []abortedTxn{{producer: 5, firstOffset: 3}}}
		for _, iso := range []Isolation{ReadCommitted, ReadUncommitted} {
			res := FetchResult{Next: offset}
			dec := []byte{}
			_ = readBatches(p, FetchRequest{Offset: offset, Isolation: iso}, &batches{w: wire{b: records}, dec: &dec}, &res)
		}
	})
}
