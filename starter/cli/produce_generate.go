package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/eventgen"
)

// produceGenerated sends events 0 to n-1 of gen through cl, the client
// produce built with the environment's TLS and SASL, at most rate a second
// (0: no limit), and returns how many Kafka acknowledged. It is
// eventgen's Produce on a client of the caller's.
func produceGenerated(ctx context.Context, cl *kgo.Client, gen *eventgen.Generator, topic string, rate float64, n int64) (int64, error) {
	var acks eventgen.Acks
	start := time.Now()
	var i int64
	for ; i < n; i++ {
		if eventgen.Pace(ctx, start, rate, i) != nil || acks.Failed() {
			break
		}
		cl.Produce(ctx, &kgo.Record{Value: gen.Event(i)}, acks.Done)
	}
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), produceFlushTimeout)
	defer cancel()
	flushErr := cl.Flush(flushCtx)
	sent := acks.Sent()
	switch {
	case acks.Failed():
		return sent, fmt.Errorf("produce to %s: %w", topic, acks.Err())
	case flushErr != nil:
		return sent, fmt.Errorf("produce to %s: wait for acknowledgements: %w", topic, flushErr)
	case i < n && ctx.Err() != nil:
		return sent, fmt.Errorf("produce to %s: stopped after %d of %d: %w", topic, sent, n, ctx.Err())
	}
	return sent, nil
}
