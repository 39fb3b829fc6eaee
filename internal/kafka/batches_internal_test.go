package kafka

import (
	"bytes"

	"testing"

	"github.com/segmentio/kafka-go/protocol"

	"github.com/stretchr/testify/require"
)

// One producer with several transactions in one fetch, aborted and
// committed in turn, beside another producer: only the aborted ones'
// batches are dropped, each up to its abort marker.
func TestAbortFilterFollowsEachProducersMarkers(t *testing.T) {
	t.Parallel()
	const p, q = 7, 9
	f := newAbortFilter(ReadCommitted, []abortedTxn{{producer: p, firstOffset: 20}, {producer: p, firstOffset: 0}, {producer: q, firstOffset: 5}})
	require.True(t, f.drops(p, 3), "p's first transaction (0..3) aborted")
	require.False(t, f.drops(q, 4), "q's batch before its aborted transaction began")
	f.marker(p, 4, true) // p's abort marker
	require.True(t, f.drops(q, 6), "q's transaction from 5 aborted")
	require.False(t, f.drops(p, 12), "p's second transaction (10..12) is not in the list: committed")
	f.marker(p, 13, false) // p's commit marker
	f.marker(q, 14, true)
	require.False(t, f.drops(q, 16), "q's next transaction committed")
	require.True(t, f.drops(p, 22), "p's third transaction (20..) aborted again")
	f.marker(p, 23, true)
	require.False(t, f.drops(p, 30))

	require.False(t, newAbortFilter(ReadUncommitted, []abortedTxn{{producer: p, firstOffset: 0}}).drops(p, 1), "read uncommitted drops nothing")
}

// The fuzzers' seed reads as built: 3 plain records, an aborted
// transaction of 2 and its marker, then 2 records of a producer with no
// aborted transaction.
func TestSeedBatchesRead(t *testing.T) {
	t.Parallel()
	p := &partitionAnswer{records: seedBatches(), lastStableOffset: -1, aborted: []abortedTxn{{producer: 5, firstOffset: 3}}}
	res := FetchResult{}
	dec := []byte{}
	require.NoError(t, readBatches(p, FetchRequest{}, &batches{w: wire{b: p.records}, dec: &dec}, &res))
	var offsets []int64
	for _, r := range res.Records {
		offsets = append(offsets, r.Offset)
		require.Equal(t, `{"a":1}`, string(r.Value))
		require.Equal(t, map[string]string{"h": "v"}, r.Headers)
	}
	require.Equal(t, []int64{0, 1, 2, 6, 7}, offsets)
	require.Equal(t, 2, res.Aborted)
	require.Equal(t, 1, res.Markers)
	require.EqualValues(t, 8, res.Next)
}

// A message set in the format before Kafka 0.11 (magic 1), as old topics
// may still hold, is read through kafka-go's decoder.
func TestLegacyMessageSetIsRead(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	rs := protocol.RecordSet{Version: 1, Records: protocol.NewRecordReader(
		protocol.Record{Offset: 0, Value: protocol.NewBytes([]byte("m0"))},
		protocol.Record{Offset: 1, Key: protocol.NewBytes([]byte("k")), Value: protocol.NewBytes([]byte("m1"))},
	)}
	_, err := rs.WriteTo(&buf)
	require.NoError(t, err)
	records := buf.Bytes()[4:] // the record set's own size prefix
	p := &partitionAnswer{records: records, lastStableOffset: -1}
	res := FetchResult{}
	dec := []byte{}
	require.NoError(t, readBatches(p, FetchRequest{}, &batches{w: wire{b: records}, dec: &dec}, &res))
	require.Len(t, res.Records, 2)
	require.Equal(t, "m0", string(res.Records[0].Value))
	require.Equal(t, "k", string(res.Records[1].Key))
	require.EqualValues(t, 2, res.Next)
}
