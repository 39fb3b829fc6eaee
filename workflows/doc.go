// Package workflows holds handoff's Temporal workflows: the supervisor, which
// is the checkpoint authority for one ingestion spec, and its task-group
// children, which consume and publish. Only deterministic code lives here: no
// I/O, only the SDK's workflow API and domain types.
package workflows
