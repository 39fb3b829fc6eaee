package domain

import (
	"fmt"
	"time"
)

// HeldPartition is a partition held behind an open transaction: a
// read-committed reader has read it up to its last stable offset, the
// first offset of a transaction that has not ended, while its log goes on
// to HighWatermark. Nothing past Offset can be read until that transaction
// commits or aborts (or the broker aborts it at its timeout).
type HeldPartition struct {
	Partition     Partition `json:"partition"`
	Offset        int64     `json:"offset"`
	HighWatermark int64     `json:"highWatermark"`
	// Since is when a reader first found the partition held at Offset.
	Since time.Time `json:"since"`
}

func (h HeldPartition) String() string {
	return fmt.Sprintf("partition %s at offset %d since %s, %d records behind it",
		h.Partition, h.Offset, h.Since.UTC().Format(time.RFC3339), h.HighWatermark-h.Offset)
}
