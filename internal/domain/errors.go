package domain

// Type names of errors that a retry cannot fix. Activities return them as
// non-retryable Temporal application errors; workflows and the CLI match on
// these names, so they are part of the API and never change.
const (
	// ErrInvalidSpec: the spec fails validation.
	ErrInvalidSpec = "InvalidSpec"
	// ErrTopicNotFound: the spec's topic does not exist on the brokers.
	ErrTopicNotFound = "TopicNotFound"
	// ErrOffsetMismatch: a publish's start offsets differ from the offsets
	// stored for the datasource, and it is not the replay of a publish that
	// already committed.
	ErrOffsetMismatch = "OffsetMismatch"
	// ErrSequenceConflict: a sequence name is already recorded with other
	// offsets.
	ErrSequenceConflict = "SequenceConflict"
	// ErrInvalidReset: a reset names a partition the topic does not have or
	// an offset outside a partition's range.
	ErrInvalidReset = "InvalidReset"
	// ErrParseExceptionsExceeded: a group met more unparseable rows than
	// tuningConfig.maxParseExceptions allows.
	ErrParseExceptionsExceeded = "ParseExceptionsExceeded"
	// ErrOffsetOutOfRange: a group's next offset is no longer in its
	// partition (expired, or the topic was recreated). The group fails;
	// with ioConfig.resetOffsetAutomatically the supervisor resets the
	// partition and restarts it, else it stays failing until a reset. Its
	// details are an OutOfRange.
	ErrOffsetOutOfRange = "OffsetOutOfRange"
	// ErrMessageTooLarge: a message is larger than
	// tuningConfig.maxMessageBytes.
	ErrMessageTooLarge = "MessageTooLarge"
	// ErrTableSchema: a sequence's columns do not fit the datasource's
	// Iceberg table (a column's type differs from the table's).
	ErrTableSchema = "TableSchema"
)

// ErrSchemaRegistryUnavailable: a read stopped because the schema registry
// could not give a record's schema (down, slow, refusing the credentials).
// Unlike the others it is retryable: the activity retries with back-off,
// the record is read again, and the supervisor's watch reports it while
// it lasts.
const ErrSchemaRegistryUnavailable = "SchemaRegistryUnavailable"

// ErrCompactionConflict: the used segments of an interval changed since a
// compaction read them in a way it cannot reconcile (a retention drop,
// another compaction): it gives that interval up, commits nothing, and the
// next round plans it again.
const ErrCompactionConflict = "CompactionConflict"
