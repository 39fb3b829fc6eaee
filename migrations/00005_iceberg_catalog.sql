-- +goose Up
-- The tables of Iceberg's JDBC catalog (schema V1, with iceberg_type), so
-- JdbcCatalog (Spark, Trino, Flink), pyiceberg's SqlCatalog and iceberg-go's
-- SQL catalog open handoff's tables from this database as they are.
CREATE TABLE IF NOT EXISTS iceberg_tables (
    catalog_name VARCHAR(255) NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    iceberg_type VARCHAR(5),
    PRIMARY KEY (catalog_name, table_namespace, table_name)
);

CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
    catalog_name VARCHAR(255) NOT NULL,
    namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255) NOT NULL,
    property_value VARCHAR(1000),
    PRIMARY KEY (catalog_name, namespace, property_key)
);

-- +goose Down
DROP TABLE iceberg_namespace_properties;
DROP TABLE iceberg_tables;
