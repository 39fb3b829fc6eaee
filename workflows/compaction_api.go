package workflows

import (
	"time"

	"handoff/internal/domain"
)

// CompactionWorkflowName is the type name of a datasource's compaction
// workflow.
const CompactionWorkflowName = "Compaction"

// CompactionWorkflowID is the workflow id of a datasource's compaction.
func CompactionWorkflowID(dataSource string) string { return "compaction/" + dataSource }

// Signals users send to a compaction workflow.
const (
	// SignalCompactionWake (no payload) starts a round now: `starter
	// compaction set` sends it after recording a config.
	SignalCompactionWake = "wake"
	// SignalStop (StopSignal) lets the running compactions finish and
	// completes the workflow.
)

// CompactionInput starts a datasource's compaction; Carry is the state a
// run hands to the next across continue-as-new.
type CompactionInput struct {
	DataSource string
	Carry      *CompactionStatus `json:",omitempty"`
}

// CompactionStatus is the answer of a compaction workflow to QueryStatus
// and what it carries across continue-as-new.
type CompactionStatus struct {
	DataSource    string                  `json:"dataSource"`
	HasConfig     bool                    `json:"hasConfig"`
	ConfigVersion int                     `json:"configVersion"`
	Config        domain.CompactionConfig `json:"config"`
	Stopping      bool                    `json:"stopping"`
	// HasRetention: the datasource has retention rules, version
	// RetentionVersion; Dropped counts the segments they dropped.
	HasRetention     bool  `json:"hasRetention"`
	RetentionVersion int   `json:"retentionVersion"`
	Dropped          int64 `json:"dropped"`
	// Killed counts the unused segments whose files were deleted.
	Killed      int64 `json:"killed"`
	KilledBytes int64 `json:"killedBytes"`
	// Swept counts the orphaned files (listed by nothing) deleted.
	Swept      int64 `json:"swept"`
	SweptBytes int64 `json:"sweptBytes"`
	// Rounds counts the plans made; Started the compactions started (it
	// numbers their names).
	Rounds    int       `json:"rounds"`
	Started   int       `json:"started"`
	LastRound time.Time `json:"lastRound"`
	NextRound time.Time `json:"nextRound"`
	// Pending is how many intervals the last plan found worth compacting,
	// those it started included; UsedSegments the datasource's used
	// segments then.
	Pending      int                 `json:"pending"`
	UsedSegments int                 `json:"usedSegments"`
	Running      []CompactionRun     `json:"running"`
	Done         int                 `json:"done"`
	Conflicts    int                 `json:"conflicts"`
	Failed       int                 `json:"failed"`
	SegmentsIn   int64               `json:"segmentsIn"`
	SegmentsOut  int64               `json:"segmentsOut"`
	RowsIn       int64               `json:"rowsIn"`
	RowsOut      int64               `json:"rowsOut"`
	BytesIn      int64               `json:"bytesIn"`
	BytesOut     int64               `json:"bytesOut"`
	Recent       []CompactionOutcome `json:"recent"`
	RecentErrors []ErrorRecord       `json:"recentErrors"`
}

// CompactionRun is one interval being compacted.
type CompactionRun struct {
	Name      string    `json:"name"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Segments  int       `json:"segments"`
	Rows      int64     `json:"rows"`
	Bytes     int64     `json:"bytes"`
	StartedAt time.Time `json:"startedAt"`
}

// CompactionOutcome is how one compaction ended: done, conflict (its
// segments changed: it gave the interval up, the next round plans it
// again) or failed.
type CompactionOutcome struct {
	CompactionRun
	Result      string    `json:"result"`
	SegmentsOut int       `json:"segmentsOut"`
	BytesOut    int64     `json:"bytesOut"`
	Error       string    `json:"error,omitempty"`
	EndedAt     time.Time `json:"endedAt"`
}

// Results of a CompactionOutcome.
const (
	CompactionDone     = "done"
	CompactionConflict = "conflict"
	CompactionFailed   = "failed"
)
