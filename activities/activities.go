// Package activities holds every piece of handoff's I/O that workflows
// orchestrate: discovering partitions, reading offsets, consuming chunks of
// Kafka into staging files, publishing segments with their offsets,
// resetting stored offsets, recording accepted specs, and checking on or
// ending task-group workflows. Activities are methods on Activities,
// which holds their dependencies; each takes one input struct and returns one
// result struct so that histories stay readable as the API grows.
package activities

import (
	"log/slog"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"

	"handoff/internal/kafka"
	"handoff/internal/lagview"
	"handoff/internal/lake"
	"handoff/internal/metrics"
	"handoff/internal/pgstore"
	"handoff/internal/storage"
	"handoff/internal/wakeup"
	"handoff/internal/workload"
)

// Activities holds what the activities need. Workflows call its methods
// through a nil pointer.
type Activities struct {
	Kafka *kafka.Client
	Store *pgstore.Store
	Deep  storage.Store // published segments: only Put and URI are used
	// Staging holds the chunks of open sequences: a local directory, or
	// object storage when workers on several hosts publish each other's
	// chunks.
	Staging storage.Store
	// Scratch is a local directory for a publish's temporary files (merge
	// passes, segment files before upload, chunks fetched from object
	// storage). Empty: the system's temporary directory.
	Scratch  string
	Temporal client.Client
	Log      *slog.Logger
	Faults   Faults
	// Tracker bounds and lists running consume and publish activities.
	// Nil: unbounded and unlisted (tests).
	Tracker *workload.Tracker
	// Metrics records what the activities did. Nil: not recorded.
	Metrics Recorder
	// Wakeups delivers WakeConsume to the streams of this process. Nil:
	// a stream returns only by itself or when cancelled.
	Wakeups *wakeup.Hub
	// Tables keeps each datasource's Iceberg table, committed with its
	// offsets. Nil: publishes register segments only.
	Tables *lake.Lake
	// HeldReportAfter is how long an open transaction must hold a
	// partition before a watch reports it to its supervisor (status, the
	// UI's details). Default DefaultHeldReportAfter.
	HeldReportAfter time.Duration

	local     localStreams // the streams running in this process
	runs      runLister    // which of their runs closed, for the watches
	describes atomic.Int64 // group workflows described by watches
}

// Recorder receives the activities' measurements (internal/metrics
// implements it for Prometheus).
type Recorder interface {
	Consumed(supervisor string, records, unparseable, thrownAway, bytesRead int64, d time.Duration)
	Published(supervisor string, rows, segments, segmentBytes int64, d, handoff time.Duration)
	// Offsets sets the lag and unpublished figures from what the caller
	// knows of committed, current and latest offsets (internal/lagview).
	Offsets(supervisor string, in lagview.Input)
	// Compacted and Retained record the lifecycle's activities.
	Compacted(dataSource string, c metrics.Compaction)
	Retained(dataSource string, dropped, killed int, killedBytes int64, swept int, sweptBytes int64)
	// AutoscalerTaskCount and AutoscalerAction record the autoscaler's
	// task count and its actions by direction.
	AutoscalerTaskCount(supervisor string, n int)
	AutoscalerAction(supervisor, direction string)
	// Skipped counts the records a read passed without a row, by reason
	// (metrics.Skipped*); HeldByTransaction sets how long an open
	// transaction has held a partition (0: not held).
	Skipped(supervisor, reason string, n int64)
	HeldByTransaction(supervisor, topic string, partition int32, d time.Duration)
	// ReadGap records how long a group did not read between two streams.
	ReadGap(supervisor string, d time.Duration)
	// SchemaRegistryFailed counts a read stopped by the schema registry;
	// SchemaRegistryUnavailable says whether a supervisor's groups wait
	// for it now.
	SchemaRegistryFailed(supervisor string)
	SchemaRegistryUnavailable(supervisor string, waiting bool)
}

// Faults lets tests inject the failures that exactly-once must survive. All
// nil in production.
type Faults struct {
	// AfterPublishCommit runs after a publish's transaction committed and
	// before the activity answers; an error makes the activity fail as if
	// its answer had been lost.
	AfterPublishCommit func(sequenceName string) error
	// BeforeCompactionCommit runs after a compaction wrote its segments
	// and before it commits; an error makes the attempt fail there.
	BeforeCompactionCommit func(compactionName string) error
	// AfterCompactionCommit runs after a compaction's transaction
	// committed and before the activity answers; an error makes the
	// attempt fail as if its answer had been lost.
	AfterCompactionCommit func(compactionName string) error
}
