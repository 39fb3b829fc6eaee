// Package workload is what the worker is doing right now and the bounds on
// it, after the Beam streaming worker's active-work table and memory
// monitor: every consume and publish activity takes a slot of its kind
// (a bounded number run at once), a consume also waits while the heap is
// over its push-back threshold, and each running activity is listed with
// its supervisor, group, partitions, sequence, state and progress, for the
// status page and metrics.
package workload
