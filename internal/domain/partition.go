package domain

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Partition names one Kafka partition: a topic and a partition number.
//
// A supervisor that reads one topic (ioConfig.topic) leaves Topic empty:
// the partition then belongs to the spec's topic, and it is written as the
// bare number ("3"), as every recorded history and stored payload has it.
// A supervisor that reads by ioConfig.topicPattern sets Topic, and the
// partition is written "topic:3" (Druid writes multi-topic partitions the
// same way). Kafka topic names never hold ':', so the form is unambiguous.
type Partition struct {
	Topic     string
	Partition int32
}

// P is the partition of the spec's own topic (a single-topic supervisor).
func P(n int32) Partition { return Partition{Partition: n} }

// TP is partition n of topic (a topicPattern supervisor).
func TP(topic string, n int32) Partition { return Partition{Topic: topic, Partition: n} }

// String is the written form: "3" or "topic:3".
func (p Partition) String() string {
	if p.Topic == "" {
		return strconv.Itoa(int(p.Partition))
	}
	return p.Topic + ":" + strconv.Itoa(int(p.Partition))
}

// Label is the partition as logs and summaries show it: "p3" or "topic:3".
func (p Partition) Label() string {
	if p.Topic == "" {
		return "p" + strconv.Itoa(int(p.Partition))
	}
	return p.String()
}

// ParsePartition reads the written form back.
func ParsePartition(s string) (Partition, error) {
	topic, num := "", s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		topic, num = s[:i], s[i+1:]
		if topic == "" {
			return Partition{}, fmt.Errorf("partition %q: empty topic before ':'", s)
		}
	}
	n, err := strconv.ParseInt(num, 10, 32)
	if err != nil || n < 0 {
		return Partition{}, fmt.Errorf("partition %q: want a partition number or topic:number", s)
	}
	return Partition{Topic: topic, Partition: int32(n)}, nil
}

// MarshalText writes the partition as a map key.
func (p Partition) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a map key.
func (p *Partition) UnmarshalText(b []byte) error {
	v, err := ParsePartition(string(b))
	*p = v
	return err
}

// MarshalJSON writes a single-topic partition as a number and a
// topicPattern partition as a string.
func (p Partition) MarshalJSON() ([]byte, error) {
	if p.Topic == "" {
		return strconv.AppendInt(nil, int64(p.Partition), 10), nil
	}
	return json.Marshal(p.String())
}

// UnmarshalJSON reads either form.
func (p *Partition) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return p.UnmarshalText([]byte(s))
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 32)
	if err != nil {
		return fmt.Errorf("partition %s: want a number or \"topic:number\"", b)
	}
	*p = Partition{Partition: int32(n)}
	return nil
}

// ComparePartitions orders by topic, then partition number.
func ComparePartitions(a, b Partition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// TopicOf is the Kafka topic a partition belongs to: its own, or the
// spec's topic for a single-topic supervisor.
func (c IOConfig) TopicOf(p Partition) string {
	if p.Topic != "" {
		return p.Topic
	}
	return c.Topic
}

// GroupOf is the task group that reads a partition. A single-topic
// supervisor keeps p % taskCount. With a topicPattern, each topic's
// partitions go round-robin from a group chosen by a hash of the topic's
// name (FNV-1a): the assignment depends only on the topic, the partition
// and taskCount, so a topic that appears or goes away never moves another
// topic's partitions, and topics with few partitions spread over the
// groups instead of all starting at group 0.
func GroupOf(p Partition, taskCount int) int {
	if p.Topic == "" {
		return int(p.Partition) % taskCount
	}
	h := fnv.New32a()
	h.Write([]byte(p.Topic))
	return int((uint64(h.Sum32()) + uint64(p.Partition)) % uint64(taskCount))
}
