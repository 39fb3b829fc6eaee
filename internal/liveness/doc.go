// Package liveness finds a dead worker in seconds and hands its running
// activities to the live ones, without riding on Temporal's activity
// heartbeat timeouts (minutes) and at no Temporal cost while nothing dies.
//
// Each worker process holds a lease, a row of worker_leases in the
// metadata Postgres: it renews it every Renew (default 1 s) until TTL
// (default 10 s) from now, lists there the activities it runs (an activity
// interceptor keeps that list), and holds a session-level advisory lock
// for as long as its connection lives. Every worker also reaps: a lease
// that expired (the worker is gone or paused) or whose lock is free though
// its worker has not renewed for a few seconds (the process died and
// Postgres closed its session) is taken, under FOR UPDATE SKIP LOCKED so
// that one live worker handles it, and each activity attempt the server
// still sees started on the dead worker's identity is failed by id with
// the retryable error type WorkerLost: first in the workflows its lease
// lists, then in every other running workflow of the namespace (an attempt
// handed to the worker in the moment before it listed it). The server then schedules the next
// attempt at once (its retry policy's first interval), on a live worker,
// with the last heartbeat's details: a stream resumes from the chunks it
// had staged, a publish runs again (it is idempotent), a watch or a small
// activity starts over.
//
// A worker that was only paused (SIGSTOP, a long GC or VM pause) finds on
// waking that its attempts are no longer current: its heartbeats and its
// answers are refused by the server, and what it wrote is fenced as
// before (its staging files carry its attempt's tag and nothing lists
// them; the offsets compare-and-swap refuses a stale publish). It renews
// its lease again and goes on serving new work.
//
// A worker reaps only once its own renewals have succeeded for five
// renewal intervals: after a Postgres outage every lease looks stale, and
// no live worker may be taken for dead before it had the chance to renew.
package liveness
