package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
)

// partitionKey names one partition of one topic.
type partitionKey struct {
	topic     string
	partition int32
}

// leaderConns keeps one idle connection to each partition's leader, so
// fetching a partition chunk after chunk costs no dial and no metadata
// lookup. A connection is used by one fetch at a time: takeIdle removes it,
// put returns it when the fetch ended cleanly.
type leaderConns struct {
	dialer  *kafkago.Dialer
	brokers []string

	mu     sync.Mutex
	idle   map[partitionKey]*kafkago.Conn
	closed bool
}

// newLeaderConns dials with TLS when tc is set and authenticates with
// mech when it is set.
func newLeaderConns(brokers []string, tc *tls.Config, mech sasl.Mechanism) *leaderConns {
	return &leaderConns{
		dialer:  &kafkago.Dialer{Timeout: 10 * time.Second, ClientID: "handoff", TLS: tc, SASLMechanism: mech},
		brokers: brokers,
		idle:    map[partitionKey]*kafkago.Conn{},
	}
}

// takeIdle returns the idle connection to the partition's leader, or nil.
func (l *leaderConns) takeIdle(k partitionKey) *kafkago.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.idle[k]
	delete(l.idle, k)
	return c
}

// dial connects to the partition's leader through the first broker that
// answers.
func (l *leaderConns) dial(ctx context.Context, k partitionKey) (*kafkago.Conn, error) {
	var errs []error
	for _, b := range l.brokers {
		c, err := l.dialer.DialLeader(ctx, "tcp", b, k.topic, int(k.partition))
		if err == nil {
			return c, nil
		}
		if unknownTopic(err) {
			return nil, err // every broker would say the same
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("connect to the leader of %s[%d] through %s: %w", k.topic, k.partition, strings.Join(l.brokers, ","), errors.Join(errs...))
}

// put keeps c for the partition's next fetch, closing any surplus.
func (l *leaderConns) put(k partitionKey, c *kafkago.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.idle[k] != nil {
		_ = c.Close()
		return
	}
	l.idle[k] = c
}

func (l *leaderConns) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for k, c := range l.idle {
		_ = c.Close()
		delete(l.idle, k)
	}
}

// dropAll closes every idle connection: leaders are looked up afresh.
func (l *leaderConns) dropAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, c := range l.idle {
		_ = c.Close()
		delete(l.idle, k)
	}
}
