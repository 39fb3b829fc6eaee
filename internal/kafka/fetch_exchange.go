package kafka

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/segmentio/kafka-go/protocol"
	fetchapi "github.com/segmentio/kafka-go/protocol/fetch"
)

// fetchExchange is a Fetch request that the client's kafka-go transport
// routes (to the partitions' leader, on a connection that spoke TLS, SASL
// and the version handshake), and that then writes itself with kafka-go's
// encoder and reads its answer as raw bytes (kafka-go's RawExchanger):
// kafka-go's own decoding of the answer copies every record into pages and
// reads each varint a byte at a time through them, which doubled the cost
// of a fetch (BenchmarkFetch), where reading the answer in place
// (parseFetchAnswer, recordBatch) costs less than kafka-go's Conn did.
type fetchExchange struct {
	fetchapi.Request // ApiKey and Broker (the leader) come from it
	version          int16
	answer           *rawAnswer
}

// rawAnswer is a Fetch response's bytes and the version they are in.
type rawAnswer struct {
	version int16
	buf     *[]byte // from answerBufs; the response body after the correlation id
}

func (*rawAnswer) ApiKey() protocol.ApiKey { return protocol.Fetch }

// answerBufs keeps response buffers for the next fetches (Recycle).
var answerBufs sync.Pool // *[]byte

var correlation atomic.Int32

// Required notes the version the connection agreed on; every fetch takes
// the raw path.
func (x *fetchExchange) Required(versions map[protocol.ApiKey]int16) bool {
	x.version = versions[protocol.Fetch]
	return true
}

// RawExchange writes the request and reads the whole response.
func (x *fetchExchange) RawExchange(rw io.ReadWriter) (protocol.Message, error) {
	if x.version < minFetchVersion {
		return nil, fmt.Errorf("the broker speaks Fetch up to version %d: reading committed records needs version %d (Kafka 0.11 or later)", x.version, minFetchVersion)
	}
	id := correlation.Add(1)
	if err := protocol.WriteRequest(rw, x.version, id, clientID, &x.Request); err != nil {
		return nil, err
	}
	var head [8]byte // size, correlation id
	if _, err := io.ReadFull(rw, head[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(head[:4])) - 4
	if got := int32(binary.BigEndian.Uint32(head[4:])); got != id {
		return nil, fmt.Errorf("fetch answer has correlation id %d, want %d", got, id)
	}
	if size < 0 || size > maxAnswerBytes {
		return nil, fmt.Errorf("fetch answer of %d bytes: want 0 to %d", size, maxAnswerBytes)
	}
	buf, _ := answerBufs.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	if cap(*buf) < int(size) {
		*buf = make([]byte, size)
	}
	*buf = (*buf)[:size]
	if _, err := io.ReadFull(rw, *buf); err != nil {
		answerBufs.Put(buf)
		return nil, err
	}
	x.answer = &rawAnswer{version: x.version, buf: buf}
	return x.answer, nil
}

// maxAnswerBytes bounds a response: the request's max bytes plus room for
// the partition headers and a first batch larger than that (Kafka returns
// one whole batch however large).
const maxAnswerBytes = 1 << 30

// clientID is the client id of every request.
const clientID = "handoff"
