// Package kafka is handoff's access to Kafka: partition discovery, earliest
// and latest offsets, and bounded reads of explicit offset ranges. It never
// joins a consumer group: the offsets that matter live in Postgres.
// Connections speak plaintext, or TLS (mutual TLS with a client
// certificate) and SASL PLAIN or SCRAM as WithSecurity says
// (SecurityFromEnv reads it from KAFKA_TLS* and KAFKA_SASL_*).
package kafka
