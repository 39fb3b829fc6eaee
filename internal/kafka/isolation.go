package kafka

import "handoff/internal/domain"

// Isolation is a fetch's isolation level, Kafka's isolation.level. The zero
// value is ReadCommitted: what a reader that must never see an aborted
// transaction wants, and Apache Druid's default.
type Isolation uint8

const (
	// ReadCommitted reads only what transactions committed (and every
	// non-transactional record), up to the partition's last stable offset.
	ReadCommitted Isolation = iota
	// ReadUncommitted reads every data record up to the high watermark,
	// those of open and aborted transactions included.
	ReadUncommitted
)

// IsolationOf is the isolation level a supervisor's spec reads at
// (ioConfig.consumerProperties, validated by the spec).
func IsolationOf(io domain.IOConfig) Isolation {
	if io.IsolationLevel() == domain.IsolationReadUncommitted {
		return ReadUncommitted
	}
	return ReadCommitted
}

func (i Isolation) String() string {
	if i == ReadUncommitted {
		return domain.IsolationReadUncommitted
	}
	return domain.IsolationReadCommitted
}

// wire is the level's value in Fetch and ListOffsets requests.
func (i Isolation) wire() int8 {
	if i == ReadUncommitted {
		return 0
	}
	return 1
}
