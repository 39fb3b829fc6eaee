// Counts with DuckDB the rows of a list of Parquet files, and each value of
// one column: the independent check that the files an Iceberg scan plans
// hold what the scan read. Prints {"rows": N, "distinct": D, "dups": K}.
// Usage: node count.mjs <files.json> <column>, files.json a JSON array of
// paths.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [list, column] = process.argv.slice(2);
if (!list || !column) {
  console.error('usage: node count.mjs <files.json> <column>');
  process.exit(2);
}
const files = JSON.parse(readFileSync(list, 'utf8'));
if (files.length === 0) {
  console.log(JSON.stringify({ rows: 0, distinct: 0, dups: 0 }));
  process.exit(0);
}
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
const quoted = files.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ');
const col = `"${column.replaceAll('"', '""')}"`;
const reader = await conn.runAndReadAll(
  `SELECT count(*)::BIGINT, count(DISTINCT ${col})::BIGINT FROM read_parquet([${quoted}])`);
const [rows, distinct] = reader.getRows()[0];
console.log(JSON.stringify({ rows: Number(rows), distinct: Number(distinct), dups: Number(rows - distinct) }));
