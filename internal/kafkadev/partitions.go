package kafkadev

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddPartitions grows a topic to total partitions, through the Kafka
// protocol's CreatePartitions request, as an operator would.
func (b *Broker) AddPartitions(ctx context.Context, topic string, total int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addrs...))
	if err != nil {
		return fmt.Errorf("add partitions to %s: %w", topic, err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreatePartitionsRequest()
	t := kmsg.NewCreatePartitionsRequestTopic()
	t.Topic, t.Count = topic, total
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 10_000
	res, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("add partitions to %s: %w", topic, err)
	}
	for _, r := range res.Topics {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return fmt.Errorf("add partitions to %s: %w", topic, err)
		}
	}
	return nil
}

// DeleteTopic deletes a topic and its records, through the Kafka protocol's
// DeleteTopics request, as an operator would.
func (b *Broker) DeleteTopic(ctx context.Context, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addrs...))
	if err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDeleteTopicsRequest()
	t := kmsg.NewDeleteTopicsRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	req.TopicNames = append(req.TopicNames, topic)
	req.TimeoutMillis = 10_000
	res, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	for _, r := range res.Topics {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return fmt.Errorf("delete topic %s: %w", topic, err)
		}
	}
	return nil
}
