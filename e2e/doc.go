// Package e2e holds handoff's end-to-end tests: a real Temporal dev server,
// a real Postgres and an in-process Kafka (kfake) that speaks the real
// protocol, with the worker's workflows and activities running in-process.
// Every test ends by counting published rows against produced events.
package e2e
