// Reads a Parquet segment with DuckDB, an independent Parquet reader, and
// prints its columns and rows as JSON on stdout:
//
//   {"columns": [{"name": "__time", "type": "TIMESTAMP WITH TIME ZONE"}, ...],
//    "rows": [[...], ...],
//    "metadata": {"handoff.schema": "..."}}
//
// Cells are JSON-safe and lossless: null; BIGINT as a decimal string;
// DOUBLE as a number, or "NaN", "Infinity", "-Infinity", "-0"; timestamps
// as Unix milliseconds in a decimal string; VARCHAR as a string; BLOB as
// base64. Usage: node check.mjs <file.parquet>
import { DuckDBInstance } from '@duckdb/node-api';

const [file] = process.argv.slice(2);
if (!file) {
  console.error('usage: node check.mjs <file.parquet>');
  process.exit(2);
}

function cell(v) {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'number':
      if (Object.is(v, -0)) return '-0';
      return Number.isFinite(v) ? v : String(v);
    case 'string':
      return v;
  }
  if (typeof v.micros === 'bigint') {
    // TIMESTAMP and TIMESTAMP WITH TIME ZONE: microseconds since the epoch.
    return (v.micros / 1000n).toString();
  }
  if (v.bytes instanceof Uint8Array) {
    return Buffer.from(v.bytes).toString('base64');
  }
  throw new Error(`unexpected value ${v} (${v.constructor?.name})`);
}

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
try {
  const result = await conn.runAndReadAll('SELECT * FROM read_parquet(?) ORDER BY __time', [file]);
  const names = result.columnNames();
  const types = result.columnTypes();
  const meta = await conn.runAndReadAll(
    'SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(?)', [file]);
  const out = {
    columns: names.map((name, i) => ({ name, type: types[i].toString() })),
    rows: result.getRows().map((row) => row.map(cell)),
    metadata: Object.fromEntries(meta.getRows()),
  };
  process.stdout.write(JSON.stringify(out) + '\n');
} finally {
  conn.closeSync();
  instance.closeSync();
}
