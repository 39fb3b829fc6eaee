package chaos

import (
	"context"
	"fmt"
	"sync/atomic"

	"handoff/internal/eventgen"
)

// producer sends the scenario's events; its generator numbers them, so the
// ids produced are RunID-0 ... RunID-(produced-1).
type producer struct {
	e    *env
	gen  *eventgen.Generator
	sent atomic.Int64
}

func (e *env) producer(seed uint64) *producer {
	return &producer{e: e, gen: eventgen.New(e.name, seed)}
}

// produce sends n events at rate events/s (0: as fast as possible); every
// one must be acknowledged.
func (p *producer) produce(n int64, rate float64) error {
	sent, err := p.gen.Produce(context.Background(), p.e.brokers, p.e.name, rate, n, false)
	p.sent.Add(sent)
	if err != nil {
		return err
	}
	if sent != n {
		return fmt.Errorf("produced %d of %d events", sent, n)
	}
	return nil
}

// background produces n events at rate and reports on the channel.
func (p *producer) background(n int64, rate float64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- p.produce(n, rate) }()
	return done
}

// produced is how many events Kafka acknowledged.
func (p *producer) produced() int64 { return p.sent.Load() }

// until produces at rate until the returned stop is called; stop waits
// for the acknowledgements and returns the producer's error.
func (p *producer) until(rate float64) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		sent, err := p.gen.Produce(ctx, p.e.brokers, p.e.name, rate, 0, false)
		p.sent.Add(sent)
		done <- err
	}()
	return func() error {
		cancel()
		return <-done
	}
}
