// Package kafka is handoff's access to Kafka: partition discovery, earliest
// and latest offsets, and bounded reads of explicit offset ranges. It never
// joins a consumer group: the offsets that matter live in Postgres.
//
// Reads are read committed unless asked otherwise, as Kafka's own consumer
// does them: records of aborted transactions are left out, nothing at or
// past the last stable offset is read, and transaction markers are passed
// (batches.go, aborted.go). A fetch goes through kafka-go's transport as a
// raw exchange whose answer is read in place (fetch_exchange.go,
// fetch_answer.go, recordbatch.go): record keys and values are slices of
// pooled buffers, handed back by FetchResult.Recycle.
// Streams follow their partitions through the client's shared fetcher
// (Follow, feed.go, fetcher.go): every followed partition with the same
// leader is asked in one multi-partition Fetch request, so a worker holds
// O(brokers) connections and an idle one asks each broker once per wait.
// Connections speak plaintext, or TLS (mutual TLS with a client
// certificate) and SASL PLAIN or SCRAM as WithSecurity says
// (SecurityFromEnv reads it from KAFKA_TLS* and KAFKA_SASL_*).
package kafka
