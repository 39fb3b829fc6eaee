package kafka

import "fmt"

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

// Names of the isolation levels, as Kafka's consumers spell them.
const (
	ReadCommittedName   = "read_committed"
	ReadUncommittedName = "read_uncommitted"
)

// ParseIsolation reads Kafka's name of an isolation level; "" is
// ReadCommitted.
func ParseIsolation(s string) (Isolation, error) {
	switch s {
	case "", ReadCommittedName:
		return ReadCommitted, nil
	case ReadUncommittedName:
		return ReadUncommitted, nil
	}
	return ReadCommitted, fmt.Errorf("isolation level %q: want %s or %s", s, ReadCommittedName, ReadUncommittedName)
}

func (i Isolation) String() string {
	if i == ReadUncommitted {
		return ReadUncommittedName
	}
	return ReadCommittedName
}

// wire is the level's value in Fetch and ListOffsets requests.
func (i Isolation) wire() int8 {
	if i == ReadUncommitted {
		return 0
	}
	return 1
}
