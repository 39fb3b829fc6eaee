package domain

import "fmt"

// OutOfRange describes an offset a group wanted that its partition no
// longer holds: the details of an ErrOffsetOutOfRange error.
type OutOfRange struct {
	SupervisorID string `json:"supervisorId"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	// Offset is the offset the group wanted to read next.
	Offset int64 `json:"offset"`
	// Earliest and Latest are the partition's bounds when it was found
	// out: the first offset it holds and the one the next record gets.
	Earliest int64 `json:"earliest"`
	Latest   int64 `json:"latest"`
	// AutoReset: ioConfig.resetOffsetAutomatically was on.
	AutoReset bool `json:"autoReset,omitempty"`
	// UseEarliest: ioConfig.useEarliestOffset, where an automatic reset
	// goes (earliest, else latest).
	UseEarliest bool `json:"useEarliest,omitempty"`
}

// Recreated reports whether the partition's offsets started again lower
// than where the group was: the topic was deleted and recreated (or
// truncated). Kafka refused the offset, so if it is not before the
// partition's earliest it was past its end when asked, even if the new
// topic has grown past it since. Otherwise records expired (retention or a
// delete-records) and the offset is before the earliest.
func (o OutOfRange) Recreated() bool { return o.Offset >= o.Earliest }

// Target is where an automatic reset moves the partition, as Druid does:
// "earliest" with useEarliestOffset, else "latest".
func (o OutOfRange) Target() string {
	if o.UseEarliest {
		return "earliest"
	}
	return "latest"
}

// Cause says in words why the offset is gone.
func (o OutOfRange) Cause() string {
	if o.Recreated() {
		return "it is not before the partition's earliest offset, so it was past its end: the topic was deleted and recreated (or truncated), and its offsets started again lower"
	}
	return "the records before the partition's earliest offset expired (retention) or were deleted"
}

// Advice says what to run to move on, for a supervisor that does not reset
// by itself.
func (o OutOfRange) Advice() string {
	return fmt.Sprintf("run `starter reset %s --partition %d=earliest --force` (or =latest; or `starter suspend %s` first and reset without --force), or set ioConfig.resetOffsetAutomatically to true",
		o.SupervisorID, o.Partition, o.SupervisorID)
}

// Error is the whole story: what, where, why and what to do.
func (o OutOfRange) Error() string {
	msg := fmt.Sprintf("supervisor %s: offset %d of topic %q partition %d is out of range (the partition holds offsets %d to %d); %s",
		o.SupervisorID, o.Offset, o.Topic, o.Partition, o.Earliest, o.Latest, o.Cause())
	if o.AutoReset {
		return msg + fmt.Sprintf("; ioConfig.resetOffsetAutomatically is on: the supervisor resets the partition to its %s offset and restarts the group", o.Target())
	}
	return msg + "; ioConfig.resetOffsetAutomatically is off, so the group stops here: " + o.Advice()
}

// Key is the partition as the supervisor names it: by number alone for a
// single-topic supervisor, with its topic for a topicPattern one.
func (o OutOfRange) Key(io IOConfig) Partition {
	if io.MultiTopic() {
		return TP(o.Topic, o.Partition)
	}
	return P(o.Partition)
}
