// Package chaos is handoff's fault-injection suite: it runs the real worker
// binary as processes against a real Postgres, a Temporal dev server and
// Kafka (kfake, in process or as a process of its own), injects a fault
// while events with unique ids are produced (SIGKILLed workers, some in
// the middle of a compaction or either side of its commit, a worker gone
// for good, Postgres restarted or unreachable, the Temporal server
// killed and restarted, the broker frozen or late), stops the supervisor,
// and then checks from the Parquet files and Postgres alone that every
// produced event was published exactly once, that the committed offsets
// are the topic's end offsets and that no staging file is left behind.
//
// `go test ./e2e/chaos` runs the short form (a couple of faults per
// scenario); HANDOFF_CHAOS=long (`make chaos`) runs the long form. Each
// scenario prints one line starting with "CHAOS-RESULT " followed by JSON
// (faults injected, events produced, published, duplicated, lost), and
// appends it to the file HANDOFF_CHAOS_REPORT names, if set.
package chaos
