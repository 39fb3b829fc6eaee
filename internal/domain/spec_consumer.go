package domain

import (
	"fmt"
	"slices"
)

// ioConfig.consumerProperties is Apache Druid's map of Kafka consumer
// properties. handoff reads one of them, isolation.level: read_committed
// (the default, as in Druid) never reads a record of an aborted
// transaction nor one past the partition's last stable offset;
// read_uncommitted reads every record up to the high watermark. Brokers,
// security and client tuning are the worker's settings, not the spec's, so
// any other property is refused by name rather than silently ignored.

// The isolation.level property and its values, as Kafka spells them.
const (
	PropIsolationLevel       = "isolation.level"
	IsolationReadCommitted   = "read_committed"
	IsolationReadUncommitted = "read_uncommitted"
)

// IsolationLevel is the effective isolation level of the supervisor's
// reads: its consumerProperties' isolation.level, read_committed when
// unset.
func (c IOConfig) IsolationLevel() string {
	if v, ok := c.ConsumerProperties[PropIsolationLevel].(string); ok && v != "" {
		return v
	}
	return IsolationReadCommitted
}

func validateConsumerProperties(props map[string]any) error {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		path := "ioConfig.consumerProperties." + quoteKey(k)
		if k != PropIsolationLevel {
			return &FieldError{Path: path, Msg: "not read: handoff reads only isolation.level here; the brokers, TLS and SASL are the worker's settings (KAFKA_BROKERS, KAFKA_TLS*, KAFKA_SASL_*)"}
		}
		switch v := props[k].(type) {
		case string:
			if v != IsolationReadCommitted && v != IsolationReadUncommitted {
				return &FieldError{Path: path, Msg: fmt.Sprintf("%q: want %s (the default) or %s", v, IsolationReadCommitted, IsolationReadUncommitted)}
			}
		default:
			return &FieldError{Path: path, Msg: fmt.Sprintf("want a string (%s or %s), got %v", IsolationReadCommitted, IsolationReadUncommitted, v)}
		}
	}
	return nil
}

// quoteKey quotes a property name for a field path: consumer properties
// have dots in their names.
func quoteKey(k string) string { return QuoteName(k) }
