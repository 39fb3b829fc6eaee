// Package registry is the schema-registry client the decoders of
// internal/decode read schemas through: a Confluent Schema Registry (or any
// server speaking its REST API, such as Redpanda's or Apicurio's
// compatibility API) reached with github.com/twmb/franz-go/pkg/sr.
//
// Schemas are immutable by id, so a fetched schema (with the schemas it
// references) is cached for the life of the process, and clients are shared
// by every parser that names the same registry (Open): a consume activity
// makes a parser per chunk, and must not fetch its schemas again each time.
//
// Failures come in two kinds, and callers must keep them apart:
//
//   - *NotFoundError: the registry answered 404 for the id. The record
//     names a schema that does not exist: the record is bad (unparseable).
//   - *UnavailableError: anything else (connection refused, timeout, 5xx,
//     401/403). The record may be fine: the caller must stop and retry
//     later, never count the record as bad.
//
// Credentials never appear in a spec: its config and headers name
// environment variables (${env:NAME}) that the worker resolves here, and
// neither errors nor logs carry their values.
package registry
