// Package kafkadev runs an in-process Kafka broker for the dev stack and for
// tests. It wraps kfake, which speaks the real Kafka protocol, so any client
// (franz-go, kafka-go) talks to it as to a real broker. Its data lives in
// memory and is gone when the broker closes.
package kafkadev

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Broker is one running in-process Kafka broker.
type Broker struct {
	cluster *kfake.Cluster
	addrs   []string
}

// Start listens on addr ("127.0.0.1:9092"; port 0 picks a free port) and
// creates topics, each with its partition count. The broker advertises the
// address it listens on, so addr needs a specific host: an empty host means
// 127.0.0.1, and unspecified ones (0.0.0.0, ::) are refused because clients
// could not dial them back.
func Start(ctx context.Context, addr string, topics map[string]int32) (*Broker, error) {
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, err
	}
	opts := []kfake.Opt{
		kfake.Ports(port), // one port: one broker
		// Accept batches up to 16 MiB (Kafka's default is 1 MiB), so tests
		// can send the oversize messages a worker must cope with.
		kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(16 << 20)}),
		// kfake always asks for 127.0.0.1; listen on the host we were given.
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			_, p, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			var lc net.ListenConfig
			return lc.Listen(ctx, network, net.JoinHostPort(host, p))
		}),
	}
	for name, n := range topics {
		if err := checkTopic(name, n); err != nil {
			return nil, err
		}
		opts = append(opts, kfake.SeedTopics(n, name))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start kafka on %s: %w", addr, err)
	}
	return &Broker{cluster: c, addrs: c.ListenAddrs()}, nil
}

// Addrs returns the host:port clients should use as seed brokers.
func (b *Broker) Addrs() []string { return append([]string(nil), b.addrs...) }

// CreateTopic creates a topic with the given number of partitions. Creating
// a topic that exists is an error.
func (b *Broker) CreateTopic(ctx context.Context, name string, partitions int32) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	if err := checkTopic(name, partitions); err != nil {
		return err
	}
	if err := b.cluster.CreateTopic(name, partitions, nil); err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	return nil
}

// Close stops the broker and drops its data. It is safe to call twice.
func (b *Broker) Close() { b.cluster.Close() }

func splitAddr(addr string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("kafka address %q: %w", addr, err)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("kafka address %q: bad port %q", addr, p)
	}
	if h == "" {
		h = "127.0.0.1"
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
		return "", 0, fmt.Errorf("kafka address %q: want a host clients can dial, not %s", addr, h)
	}
	return h, port, nil
}

func checkTopic(name string, partitions int32) error {
	if name == "" {
		return fmt.Errorf("topic name is empty")
	}
	if partitions < 1 {
		return fmt.Errorf("topic %s: want 1 or more partitions, got %d", name, partitions)
	}
	return nil
}
