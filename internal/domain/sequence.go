package domain

import "fmt"

// Sequence is a contiguous offset range [Start, End) per partition of one
// task group: the unit of publishing. End is nil while the sequence is open.
type Sequence struct {
	ID    int     `json:"id"`
	Start Offsets `json:"start"`
	End   Offsets `json:"end,omitempty"`
}

// Open reports whether the sequence's end has not been set yet.
func (s Sequence) Open() bool { return s.End == nil }

// SequenceName is the deterministic, unique name of a sequence: it names the
// publish's idempotency record and the segments the sequence produces.
func SequenceName(supervisorID string, group, seq int) string {
	return fmt.Sprintf("%s_g%d_s%d", supervisorID, group, seq)
}
