package workflows

import (
	"slices"
	"time"

	"handoff/internal/domain"
)

// maxRecentErrors bounds the supervisor's ring of recent errors.
const maxRecentErrors = 10

// unhealthyAfterFailures is how many failures of one group in a row make the
// supervisor UNHEALTHY_TASKS.
const unhealthyAfterFailures = 3

// What the user wants the supervisor to do.
const (
	targetRun     = "run"
	targetSuspend = "suspend"
	targetStop    = "stop"
)

// SupervisorCarry is the supervisor state carried across continue-as-new.
type SupervisorCarry struct {
	State         string               `json:"state"`
	DetailedState string               `json:"detailedState"`
	Target        string               `json:"target"`
	PendingSpec   *domain.Spec         `json:"pendingSpec,omitempty"`
	SpecRecorded  bool                 `json:"specRecorded,omitempty"`
	Connected     bool                 `json:"connected,omitempty"` // Kafka answered at least once
	Partitions    []domain.Partition   `json:"partitions"`
	Groups        map[int]*groupRecord `json:"groups"`
	Generations   int                  `json:"generations"` // generations handed out, across groups
	Committed     domain.Offsets       `json:"committed"`
	Current       domain.Offsets       `json:"current"`
	Latest        domain.Offsets       `json:"latest"`
	LatestAt      time.Time            `json:"latestAt,omitzero"` // when Latest was read (setLatest)
	Published     PublishTotals        `json:"published"`
	Read          ReadTotals           `json:"read"`
	IdleSince     time.Time            `json:"idleSince,omitempty"`
	RecentErrors  []ErrorRecord        `json:"recentErrors"`
	// OffsetResets are the latest automatic resets of offsets that were
	// out of range (at most maxOffsetResets).
	OffsetResets []OffsetResetRecord `json:"offsetResets,omitempty"`
	// Watched is what the last watch reported (supervisor_watch.go).
	Watched *WatchedState `json:"watched,omitempty"`
	// Autoscaler is the lag-based autoscaler's state
	// (supervisor_autoscale.go), nil until one is enabled.
	Autoscaler *AutoscalerState `json:"autoscaler,omitempty"`
	// DeletedTopics are a topicPattern's topics that were deleted
	// (supervisor_topics.go), oldest first.
	DeletedTopics []DeletedTopic `json:"deletedTopics,omitempty"`
}

// groupRecord is what the supervisor knows of one task group. Its
// Sequences are the checkpoints: every recorded sequence not yet published,
// the open one last.
type groupRecord struct {
	Partitions     []domain.Partition `json:"partitions"`
	Generation     int                `json:"generation"`
	RollingTo      int                `json:"rollingTo,omitempty"` // generation a rollover was asked for
	StartedAt      time.Time          `json:"startedAt"`           // of the current generation
	Sequences      []domain.Sequence  `json:"sequences"`
	SequenceRows   map[int]int64      `json:"sequenceRows,omitempty"`
	NextSequenceID int                `json:"nextSequenceId"`
	Running        bool               `json:"running"`
	StopSent       bool               `json:"stopSent,omitempty"` // this generation was told to stop
	Finished       bool               `json:"finished,omitempty"` // completed after a stop
	Failures       int                `json:"failures,omitempty"` // in a row
	RetryAt        time.Time          `json:"retryAt,omitempty"`
	// OutOfRange: the group failed on an offset its partition no longer
	// holds, and nothing resets it by itself (resetOffsetAutomatically is
	// off). Cleared by a reset or the group's next publish.
	OutOfRange *domain.OutOfRange `json:"outOfRange,omitempty"`
}

// groupPartitions splits partitions over taskCount groups (p % taskCount);
// groups with no partition are left out.
func groupPartitions(partitions []domain.Partition, taskCount int) map[int][]domain.Partition {
	out := map[int][]domain.Partition{}
	for _, p := range partitions {
		g := domain.GroupOf(p, taskCount)
		out[g] = append(out[g], p)
	}
	for g := range out {
		slices.SortFunc(out[g], domain.ComparePartitions)
	}
	return out
}

// sequence returns the recorded sequence with that id, or nil.
func (r *groupRecord) sequence(id int) *domain.Sequence {
	for i := range r.Sequences {
		if r.Sequences[i].ID == id {
			return &r.Sequences[i]
		}
	}
	return nil
}

// open returns the open sequence, or nil.
func (r *groupRecord) open() *domain.Sequence {
	if n := len(r.Sequences); n > 0 && r.Sequences[n-1].Open() {
		return &r.Sequences[n-1]
	}
	return nil
}

// knows reports whether a signal from generation gen is current.
func (r *groupRecord) knows(gen int) bool {
	return gen == r.Generation || (r.RollingTo != 0 && gen == r.RollingTo)
}

func hasClosed(rec *groupRecord) bool {
	return slices.ContainsFunc(rec.Sequences, func(q domain.Sequence) bool { return !q.Open() })
}

func subset(o domain.Offsets, partitions []domain.Partition) domain.Offsets {
	out := domain.Offsets{}
	for _, p := range partitions {
		if v, ok := o[p]; ok {
			out[p] = v
		}
	}
	return out
}

// restartBackoff is how long a group waits before its next start after
// failures failures in a row: 5s, 10s, 20s ... up to 5 minutes.
func restartBackoff(failures int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < failures && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}
