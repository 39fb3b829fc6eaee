package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// Message is one record to produce.
type Message struct {
	Key     []byte
	Value   []byte
	Headers map[string]string
}

// Produce writes messages to a topic and returns once every one is
// acknowledged by all in-sync replicas. It is for dead letters: small,
// rare batches, so it favours simplicity over throughput.
func (c *Client) Produce(ctx context.Context, topic string, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	w := &kafkago.Writer{
		Addr:         kafkago.TCP(c.brokers...),
		Topic:        topic,
		Transport:    c.transport,
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: 10 * time.Millisecond,
		BatchBytes:   16 << 20,
		Balancer:     &kafkago.LeastBytes{},
	}
	defer w.Close()
	out := make([]kafkago.Message, len(msgs))
	for i, m := range msgs {
		out[i] = kafkago.Message{Key: m.Key, Value: m.Value}
		for k, v := range m.Headers {
			out[i].Headers = append(out[i].Headers, kafkago.Header{Key: k, Value: []byte(v)})
		}
	}
	err := w.WriteMessages(ctx, out...)
	if unknownTopic(err) {
		// A dead-letter topic that does not exist yet is created with the
		// broker's default partitions and replication, as Kafka Connect does.
		if cerr := c.createTopic(ctx, topic); cerr != nil {
			return fmt.Errorf("produce to %s: %w", topic, cerr)
		}
		c.refresh()
		err = w.WriteMessages(ctx, out...)
	}
	if err != nil {
		return fmt.Errorf("produce %d message(s) to %s: %w", len(msgs), topic, c.auth.explain(err))
	}
	return nil
}

func (c *Client) createTopic(ctx context.Context, topic string) error {
	res, err := c.c.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{
		{Topic: topic, NumPartitions: -1, ReplicationFactor: -1},
	}})
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if err := res.Errors[topic]; err != nil && !errors.Is(err, kafkago.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}
