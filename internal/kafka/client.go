package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// ErrTopicNotFound is returned (wrapped) when the topic does not exist.
var ErrTopicNotFound = errors.New("topic not found")

// Client talks to one Kafka cluster.
type Client struct {
	brokers   []string
	addr      net.Addr // every bootstrap broker
	c         *kafkago.Client
	transport *kafkago.Transport // fetches go through it too
	auth      auth               // explains connection errors

	fetcher     *fetcher // reads the partitions followed (Follow)
	leaderCache leaderCache
	fetches     atomic.Int64 // Fetch requests sent
}

// Option configures New.
type Option func(*Security)

// WithSecurity connects with TLS and SASL as sec says; without it the
// client speaks plaintext without authentication.
func WithSecurity(sec Security) Option { return func(s *Security) { *s = sec } }

// New returns a client for the given bootstrap brokers ("host:port"). It
// reads the TLS files now, so a missing or malformed one fails here; it
// makes no connection.
func New(brokers []string, opts ...Option) (*Client, error) {
	if len(brokers) == 0 {
		return nil, errors.New("kafka: no brokers given")
	}
	var sec Security
	for _, o := range opts {
		o(&sec)
	}
	tc, mech, err := sec.connection()
	if err != nil {
		return nil, err
	}
	// An own transport, so refresh drops only this client's metadata cache.
	t := &kafkago.Transport{TLS: tc, SASL: mech, ClientID: "handoff", DialTimeout: 10 * time.Second}
	addr := kafkago.TCP(brokers...)
	c := &Client{
		brokers:   brokers,
		addr:      addr,
		c:         &kafkago.Client{Addr: addr, Timeout: 30 * time.Second, Transport: t},
		transport: t,
		auth:      authOf(sec),
	}
	c.fetcher = newFetcher(c)
	return c, nil
}

// Close closes the client's idle connections.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// refresh drops the transport's connections and the cluster metadata it
// caches (refreshed only every few seconds otherwise), so the next request
// sees topics created since.
func (c *Client) refresh() {
	c.transport.CloseIdleConnections()
}

// Brokers returns the bootstrap brokers.
func (c *Client) Brokers() []string { return c.brokers }

// Partitions lists a topic's partitions in ascending order. A topic the
// cached metadata does not know is looked up again with fresh metadata
// before it is reported missing.
func (c *Client) Partitions(ctx context.Context, topic string) ([]int32, error) {
	ps, err := c.partitions(ctx, topic)
	if errors.Is(err, ErrTopicNotFound) {
		c.refresh()
		ps, err = c.partitions(ctx, topic)
	}
	return ps, err
}

func (c *Client) partitions(ctx context.Context, topic string) ([]int32, error) {
	res, err := c.c.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata of topic %q from %s: %w", topic, strings.Join(c.brokers, ","), c.auth.explain(err))
	}
	for _, t := range res.Topics {
		if t.Name != topic {
			continue
		}
		if errors.Is(t.Error, kafkago.UnknownTopicOrPartition) {
			return nil, fmt.Errorf("topic %q on %s: %w", topic, strings.Join(c.brokers, ","), ErrTopicNotFound)
		}
		if t.Error != nil {
			return nil, fmt.Errorf("metadata of topic %q: %w", topic, t.Error)
		}
		ps := make([]int32, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			ps = append(ps, int32(p.ID))
		}
		slices.Sort(ps)
		if len(ps) == 0 {
			return nil, fmt.Errorf("topic %q on %s: %w", topic, strings.Join(c.brokers, ","), ErrTopicNotFound)
		}
		return ps, nil
	}
	return nil, fmt.Errorf("topic %q on %s: %w", topic, strings.Join(c.brokers, ","), ErrTopicNotFound)
}

// Bounds returns each partition's earliest offset and its latest as a
// reader at iso sees it: the high watermark (the offset the next produced
// record will get) under read uncommitted, the last stable offset (the
// first offset of the oldest open transaction, else the high watermark)
// under read committed.
func (c *Client) Bounds(ctx context.Context, topic string, partitions []int32, iso Isolation) (earliest, latest map[int32]int64, err error) {
	reqs := make([]kafkago.OffsetRequest, 0, 2*len(partitions))
	for _, p := range partitions {
		reqs = append(reqs, kafkago.FirstOffsetOf(int(p)), kafkago.LastOffsetOf(int(p)))
	}
	res, err := c.c.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{topic: reqs}, IsolationLevel: kafkago.IsolationLevel(iso.wire())})
	if err != nil {
		return nil, nil, fmt.Errorf("list offsets of topic %q: %w", topic, c.auth.explain(err))
	}
	earliest, latest = map[int32]int64{}, map[int32]int64{}
	for _, po := range res.Topics[topic] {
		if po.Error != nil {
			if errors.Is(po.Error, kafkago.UnknownTopicOrPartition) {
				return nil, nil, fmt.Errorf("topic %q partition %d: %w", topic, po.Partition, ErrTopicNotFound)
			}
			return nil, nil, fmt.Errorf("list offsets of topic %q partition %d: %w", topic, po.Partition, po.Error)
		}
		earliest[int32(po.Partition)] = po.FirstOffset
		latest[int32(po.Partition)] = po.LastOffset
	}
	for _, p := range partitions {
		if _, ok := latest[p]; !ok {
			return nil, nil, fmt.Errorf("list offsets of topic %q: no answer for partition %d", topic, p)
		}
	}
	return earliest, latest, nil
}

// Ping checks that a broker answers a metadata request.
func (c *Client) Ping(ctx context.Context) error {
	if _, err := c.c.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{}}); err != nil {
		return fmt.Errorf("metadata from %s: %w", strings.Join(c.brokers, ","), c.auth.explain(err))
	}
	return nil
}

// Topics lists every topic the brokers hold, other than their internal
// ones (such as __consumer_offsets), with its partitions in ascending
// order. It answers from the client's metadata, which is at most a few
// seconds old: a topic created or deleted just now shows at the next call.
func (c *Client) Topics(ctx context.Context) (map[string][]int32, error) {
	res, err := c.c.Metadata(ctx, &kafkago.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("metadata from %s: %w", strings.Join(c.brokers, ","), c.auth.explain(err))
	}
	out := map[string][]int32{}
	for _, t := range res.Topics {
		if t.Internal || t.Error != nil || len(t.Partitions) == 0 {
			continue
		}
		ps := make([]int32, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			ps = append(ps, int32(p.ID))
		}
		slices.Sort(ps)
		out[t.Name] = ps
	}
	return out, nil
}

func (c *Client) where() string { return strings.Join(c.brokers, ",") }
