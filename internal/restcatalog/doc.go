// Package restcatalog serves the datasources' Iceberg tables through the
// Iceberg REST catalog protocol (apache/iceberg,
// open-api/rest-catalog-open-api.yaml), read-only, so that any engine
// that speaks it (DuckDB, Trino, Spark, pyiceberg, Snowflake, ...)
// attaches by URL and a bearer token.
//
// It reads the same catalog rows the publish transaction moves
// (lake.CatalogRows: single SELECT statements, nothing else) and the
// metadata file a row points at from deep storage (internal/storage). A
// loadTable reads the table's metadata location in one statement, then
// serves that file as stored, with the location: the snapshot it returns
// is the one committed when the statement ran, never one whose
// publish transaction has not committed and never one older than the
// last committed one. Metadata files never change once written, so they
// are cached by location (bounded by bytes) and the pointer is read on
// every load.
//
// Served: GET /v1/config; namespaces (list, load, exists) and tables
// (list, exists, load, credentials) of handoff's namespace. Every write
// (create, commit, drop, rename, register, namespace changes) is refused
// with 403 ForbiddenException: the tables are owned by their supervisors.
// Every request but /healthz and /readyz needs a bearer token (auth.go).
// Errors follow the spec's model: {"error":{"message","type","code"}}.
package restcatalog
