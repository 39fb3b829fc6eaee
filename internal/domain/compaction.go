package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Defaults of CompactionConfig.
const (
	DefaultCompactionTargetRows     = 5_000_000
	DefaultCompactionTargetBytes    = 512 << 20
	DefaultCompactionSkipFromLatest = time.Hour
	DefaultCompactionConcurrency    = 1
	DefaultCompactionPeriod         = 5 * time.Minute
)

// CompactionConfig is how a datasource's segments are compacted: the
// intervals more than SkipOffsetFromLatest before now whose used segments
// are several below target size are merged into as few segments as the
// targets allow. Field names follow Druid's automatic compaction where the
// concept is the same.
type CompactionConfig struct {
	DataSource string `json:"dataSource"`
	// TargetRowsPerSegment and TargetBytesPerSegment bound each compacted
	// segment; a segment at either target is full and left alone.
	TargetRowsPerSegment  int64 `json:"targetRowsPerSegment,omitempty"`
	TargetBytesPerSegment int64 `json:"targetBytesPerSegment,omitempty"`
	// SkipOffsetFromLatest leaves the intervals that end less than this
	// before now to ingestion.
	SkipOffsetFromLatest Duration `json:"skipOffsetFromLatest,omitempty"`
	// MaxConcurrentCompactions bounds the intervals compacted at once.
	MaxConcurrentCompactions int `json:"maxConcurrentCompactions,omitempty"`
	// Period is how often the compaction workflow looks for work.
	Period Duration `json:"period,omitempty"`
	// QueryGranularity, when set, re-rolls compacted intervals up to this
	// coarser granularity: each row's time is truncated to it and, with the
	// datasource's rollup on, rows of equal time and dimensions combine
	// (counts and sums add, minimums and maximums keep theirs, HLL
	// sketches merge). It must cover the datasource's queryGranularity
	// and be covered by its segmentGranularity (CheckGranularity). Unset:
	// compaction keeps the granularity rows have.
	QueryGranularity Granularity `json:"queryGranularity,omitempty"`
	// SegmentGranularity is named so that a config setting it gets a clear
	// refusal: compaction keeps the datasource's segment intervals.
	SegmentGranularity string `json:"segmentGranularity,omitempty"`
}

// ParseCompactionConfig decodes and validates a config, refusing unknown
// fields, and fills in the defaults.
func ParseCompactionConfig(b []byte) (CompactionConfig, error) {
	var c CompactionConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return CompactionConfig{}, fmt.Errorf("compaction config: %w", err)
	}
	c = c.WithDefaults()
	return c, c.Validate()
}

// WithDefaults fills in every unset field.
func (c CompactionConfig) WithDefaults() CompactionConfig {
	if c.TargetRowsPerSegment == 0 {
		c.TargetRowsPerSegment = DefaultCompactionTargetRows
	}
	if c.TargetBytesPerSegment == 0 {
		c.TargetBytesPerSegment = DefaultCompactionTargetBytes
	}
	if c.SkipOffsetFromLatest == 0 {
		c.SkipOffsetFromLatest = Duration(DefaultCompactionSkipFromLatest)
	}
	if c.MaxConcurrentCompactions == 0 {
		c.MaxConcurrentCompactions = DefaultCompactionConcurrency
	}
	if c.Period == 0 {
		c.Period = Duration(DefaultCompactionPeriod)
	}
	return c
}

// Validate reports the first field that is wrong.
func (c CompactionConfig) Validate() error {
	if err := ValidateName("dataSource", c.DataSource); err != nil {
		return err
	}
	switch {
	case c.TargetRowsPerSegment < 1:
		return &FieldError{Path: "targetRowsPerSegment", Msg: fmt.Sprintf("is %d, want at least 1", c.TargetRowsPerSegment)}
	case c.TargetBytesPerSegment < 1<<20:
		return &FieldError{Path: "targetBytesPerSegment", Msg: fmt.Sprintf("is %d, want at least 1 MiB (1048576)", c.TargetBytesPerSegment)}
	case c.MaxConcurrentCompactions < 1 || c.MaxConcurrentCompactions > 64:
		return &FieldError{Path: "maxConcurrentCompactions", Msg: fmt.Sprintf("is %d, want 1 to 64", c.MaxConcurrentCompactions)}
	case c.SegmentGranularity != "":
		return &FieldError{Path: "segmentGranularity", Msg: "coarser segments are not supported: the Iceberg table is partitioned by the datasource's segmentGranularity, and a data file belongs to one partition"}
	case c.Period.D() < time.Second:
		return &FieldError{Path: "period", Msg: fmt.Sprintf("is %s, want at least 1s", c.Period.D())}
	}
	if c.QueryGranularity != "" {
		g, err := ParseGranularity(string(c.QueryGranularity))
		if err != nil {
			return &FieldError{Path: "queryGranularity", Msg: err.Error()}
		}
		if g != c.QueryGranularity {
			return &FieldError{Path: "queryGranularity", Msg: fmt.Sprintf("%q: write it in lower case, %q", c.QueryGranularity, g)}
		}
	}
	return nil
}

// CheckGranularity reports whether the config's queryGranularity fits a
// datasource of granularity g: coarser than (or equal to) the rows'
// queryGranularity, since truncated times cannot be split again, and no
// coarser than the segmentGranularity, so truncated times stay in their
// segment's interval.
func (c CompactionConfig) CheckGranularity(g GranularitySpec) error {
	q := c.QueryGranularity
	switch {
	case q == "":
		return nil
	case !q.Covers(g.QueryGranularity):
		return &FieldError{Path: "queryGranularity", Msg: fmt.Sprintf("%s is finer than the datasource's queryGranularity %s: rows truncated to %s cannot be split again", q, g.QueryGranularity, g.QueryGranularity)}
	case !g.SegmentGranularity.Covers(q):
		return &FieldError{Path: "queryGranularity", Msg: fmt.Sprintf("%s is coarser than the datasource's segmentGranularity %s: truncated times would leave their segment's interval", q, g.SegmentGranularity)}
	}
	return nil
}
