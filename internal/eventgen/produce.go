package eventgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// deliveryTimeout fails a record Kafka has not acknowledged in time, so a
	// dead broker ends Produce instead of hanging it.
	deliveryTimeout = time.Minute
	// flushTimeout bounds the wait for acknowledgements once sending stops.
	flushTimeout = 10 * time.Second
)

// Produce sends events to topic at rate events per second (0: as fast as the
// brokers take them) until it has sent limit events (0: until ctx is done),
// and returns how many the brokers acknowledged. Events continue the
// generator's index, so calling Produce again never repeats an id.
//
// With keys, each record's key is its event id and records are spread by key
// hash, as Kafka's default partitioner does; without, records have no key
// and go round-robin over the partitions.
//
// The end of ctx is the normal end when limit is 0 (the error is nil); with a
// limit, stopping short returns ctx's error. Either way Produce waits briefly
// for records already sent to be acknowledged.
func (g *Generator) Produce(ctx context.Context, brokers []string, topic string, rate float64, limit int64, keys bool) (sent int64, err error) {
	if err := checkProduce(brokers, topic, rate, limit); err != nil {
		return 0, err
	}
	partitioner := kgo.RoundRobinPartitioner()
	if keys {
		partitioner = kgo.StickyKeyPartitioner(nil)
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(partitioner),
		kgo.RecordDeliveryTimeout(deliveryTimeout),
	)
	if err != nil {
		return 0, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()

	var acks Acks
	start := time.Now()
	var n int64
	for ; limit == 0 || n < limit; n++ {
		if Pace(ctx, start, rate, n) != nil || acks.Failed() {
			break
		}
		i := g.next.Add(1) - 1
		rec := &kgo.Record{Value: g.Event(i)}
		if keys {
			rec.Key = []byte(g.ID(i))
		}
		cl.Produce(ctx, rec, acks.Done)
	}

	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	flushErr := cl.Flush(flushCtx)
	sent = acks.Sent()
	switch {
	case acks.Err() != nil && !(ctx.Err() != nil && isContextErr(acks.Err())):
		return sent, fmt.Errorf("produce to %s: %w", topic, acks.Err())
	case flushErr != nil:
		return sent, fmt.Errorf("produce to %s: wait for acks: %w", topic, flushErr)
	case limit > 0 && n < limit && ctx.Err() != nil:
		return sent, fmt.Errorf("produce to %s: stopped after %d of %d: %w", topic, sent, limit, ctx.Err())
	}
	return sent, nil
}

func checkProduce(brokers []string, topic string, rate float64, limit int64) error {
	switch {
	case len(brokers) == 0:
		return errors.New("produce: no brokers")
	case topic == "":
		return errors.New("produce: no topic")
	case rate < 0:
		return fmt.Errorf("produce: rate %v: want 0 (unlimited) or more", rate)
	case limit < 0:
		return fmt.Errorf("produce: limit %d: want 0 (none) or more", limit)
	}
	return nil
}

// Acks counts the records a kgo client acknowledged and keeps the first
// failure; pass its Done as the produce callback.
type Acks struct {
	ok    atomic.Int64
	mu    sync.Mutex
	first error
}

func (a *Acks) Done(_ *kgo.Record, err error) {
	if err == nil {
		a.ok.Add(1)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.first == nil {
		a.first = err
	}
}

func (a *Acks) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.first
}

// Failed reports whether a real failure happened: records cut off by the
// end of the caller's context are not one.
func (a *Acks) Failed() bool {
	err := a.Err()
	return err != nil && !isContextErr(err)
}

// Sent is how many records were acknowledged.
func (a *Acks) Sent() int64 { return a.ok.Load() }

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Pace spaces sends evenly at rate per second (0: unlimited): send n is due
// at start + n/rate, so a late send is followed by quick ones until the
// schedule is met again. It blocks until send n is due, or returns ctx's
// error.
func Pace(ctx context.Context, start time.Time, rate float64, n int64) error {
	if err := ctx.Err(); err != nil || rate == 0 {
		return err
	}
	d := time.Until(start.Add(time.Duration(float64(n) / rate * float64(time.Second))))
	if d < time.Millisecond { // sleeping less than the timer's resolution is wasted work
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
