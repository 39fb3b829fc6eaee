// Package process runs the real worker binary as a subprocess against a
// real Postgres, a Temporal dev server and an in-process Kafka: what the
// in-process e2e tests cannot show, such as a SIGTERM or SIGKILL in the
// middle of an ingestion, and what the worker serves over HTTP.
//
// TestMain builds ./worker once; every test registers a Temporal namespace
// of its own (the worker polls the fixed task queue "handoff"), a fresh
// database and a broker, and starts one worker process after another.
package process
