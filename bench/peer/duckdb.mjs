// The benchmark's peer: DuckDB, an engine handoff does not write, does
// the pipeline's transform on the same events. It reads the backlog as
// newline-delimited JSON and writes one zstd Parquet file sorted by
// __time: every event a row (rollup off), or rolled up by minute and the
// five dimensions with the same metrics (rollup on). Each variant runs
// `repeat` times on a fresh output file; the best time counts.
//
//   node duckdb.mjs <events.jsonl> <out-dir> <threads> <repeat>
//
// It prints one JSON object: {"version", "threads", "variants": [{"name",
// "seconds" (best), "runs": [...], "rows", "events"}]}.
import { DuckDBInstance } from '@duckdb/node-api';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

const [input, outDir, threadsArg, repeatArg] = process.argv.slice(2);
if (!input || !outDir) {
  console.error('usage: node duckdb.mjs <events.jsonl> <out-dir> <threads> <repeat>');
  process.exit(2);
}
const threads = Number(threadsArg || 2);
const repeat = Number(repeatArg || 3);

const quote = (s) => `'${s.replaceAll("'", "''")}'`;
// The backlog's fields, typed as the pipeline's spec reads them (bench/pipeline.go).
const source = `read_json(${quote(input)}, format = 'newline_delimited', columns = {
  id: 'VARCHAR', ts: 'TIMESTAMPTZ', page: 'VARCHAR', browser: 'VARCHAR', country: 'VARCHAR',
  device: 'VARCHAR', action: 'VARCHAR', delta: 'BIGINT', bytes: 'BIGINT'})`;
const dims = 'page, browser, country, device, action';
const variants = [
  {
    name: 'rollup-off',
    query: `SELECT ts AS __time, ${dims}, 1::BIGINT AS events, delta, bytes FROM ${source} ORDER BY __time`,
  },
  {
    name: 'rollup-on',
    query: `SELECT date_trunc('minute', ts) AS __time, ${dims}, count(*)::BIGINT AS events, sum(delta)::BIGINT AS delta,
      sum(bytes)::BIGINT AS bytes FROM ${source} GROUP BY ALL ORDER BY __time`,
  },
];

const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const conn = await instance.connect();
const version = (await (await conn.run('SELECT version()')).getRows())[0][0];
await conn.run("SET TimeZone = 'UTC'");
const out = { version, threads, variants: [] };
for (const v of variants) {
  const file = join(outDir, `${v.name}.parquet`);
  const runs = [];
  for (let i = 0; i < repeat; i++) {
    rmSync(file, { force: true });
    const start = process.hrtime.bigint();
    await conn.run(`COPY (${v.query}) TO ${quote(file)} (FORMAT parquet, COMPRESSION zstd)`);
    runs.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  const [[rows, events]] = await (await conn.run(
    `SELECT count(*)::VARCHAR, sum(events)::VARCHAR FROM read_parquet(${quote(file)})`)).getRows();
  out.variants.push({ name: v.name, seconds: Math.min(...runs), runs, rows: Number(rows), events: Number(events) });
}
console.log(JSON.stringify(out));
