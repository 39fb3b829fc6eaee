// Package lake keeps every datasource as an Apache Iceberg (format v2)
// table in a SQL catalog that lives in the metadata Postgres, with exactly
// the tables of Iceberg's JDBC catalog (iceberg_tables,
// iceberg_namespace_properties), so Spark's and Trino's JdbcCatalog,
// pyiceberg's SqlCatalog and iceberg-go's SQL catalog open it from a
// connection string and the warehouse (deep storage) location.
//
// It is the only package that imports iceberg-go. The rest of the code
// sees three things: Ensure (the table exists and has the columns a
// publication's segments carry; their Parquet field ids), Footer (what a
// written segment file says about itself) and CommitInTx (register a
// publication's files as one snapshot inside the publish transaction).
//
// iceberg-go builds the snapshot: manifests, manifest list and the new
// metadata JSON, written to deep storage beside the data. The one step a
// library cannot do inside our transaction is ours: the compare-and-swap of
// iceberg_tables.metadata_location, executed in the same Postgres
// transaction that checks and moves the Kafka offsets. Every metadata write
// happens while that transaction holds the datasource's advisory lock, so a
// maintenance pass holding the same lock can delete whatever the current
// metadata does not reference.
package lake
