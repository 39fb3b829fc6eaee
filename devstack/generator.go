package main

import (
	"context"
	"time"

	"handoff/internal/eventgen"
)

// generator is the event generator running in the background.
type generator struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when Produce returned
	sent   int64
	err    error
}

func (s *stack) startGenerator(ctx context.Context) error {
	now := time.Now()
	g := eventgen.New(now.UTC().Format("20060102T150405"), uint64(now.UnixNano()))
	ctx, cancel := context.WithCancel(ctx)
	bg := &generator{cancel: cancel, done: make(chan struct{})}
	topic := s.spec.IOConfig.Topic
	go func() { // ends with ctx; the closer below waits for it
		defer close(bg.done)
		bg.sent, bg.err = g.Produce(ctx, s.kafkaAddrs, topic, s.cfg.rate, 0, false)
	}()
	s.gen = bg
	s.onStop("generator", func() error {
		bg.cancel()
		<-bg.done
		s.logf("generator sent %d events to %q", bg.sent, topic)
		return bg.err
	})
	return nil
}
