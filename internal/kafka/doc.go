// Package kafka is handoff's access to Kafka: partition discovery, earliest
// and latest offsets, and bounded reads of explicit offset ranges. It never
// joins a consumer group: the offsets that matter live in Postgres.
package kafka
