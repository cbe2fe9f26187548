// The batch-engine peer of the events benchmarks (jobs/bench/events_*.yaml, issue 17): DuckDB on
// one thread (`threads = 1`) running the same query over the same generated file, so the suite
// judges the file source against DuckDB measured in the same sitting, not a figure from another
// machine.
//
//   node events_duckdb.mjs scan|scan-plain|windowed EVENTS.jsonl --modules NODE_MODULES
//
// NODE_MODULES holds @duckdb/node-api, installed by `npm ci` from this folder's package-lock.json
// (tools/bench/run_suite.py does that into its data directory).
//   scan:     read and type all four fields of every line (`read_json` with the job's schema) and
//             fold them into a hash, as the checksum sink reads every field of every row;
//   scan-plain: the same typed read as a user would query it, the count and the sum of `amount`
//             (no hash of every field: DuckDB then reads the other columns' values only as far
//             as its reader must), the bar for the whole `tidemark run` process of the scan job;
//   windowed: per user and 10 s tumbling window (start = ts - ts % 10000, as Flink's tumbling
//             assigner for non-negative times), the count and the sum of `amount`.
// Prints one JSON object: {"mode", "seconds", "records", "windows", "count_sum", "amount_sum"},
// the fields of tools/bench/events_python.py, so the suite compares the answers too. `seconds`
// is the query alone (the database is opened before the clock starts).
import { createRequire } from 'node:module';
import path from 'node:path';

function parseArgs(argv) {
  const out = { positional: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--modules') {
      out.modules = argv[++i];
    } else {
      out.positional.push(argv[i]);
    }
  }
  return out;
}

const args = parseArgs(process.argv.slice(2));
const [mode, file] = args.positional;
if (!['scan', 'scan-plain', 'windowed'].includes(mode) || !file || !args.modules) {
  console.error('usage: node events_duckdb.mjs scan|scan-plain|windowed EVENTS.jsonl --modules NODE_MODULES');
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(args.modules), 'x.js'));
const { DuckDBInstance } = require('@duckdb/node-api');

const quoted = `'${path.resolve(file).replaceAll("'", "''")}'`;
const source = `read_json(${quoted}, format = 'newline_delimited', ` +
  `columns = {user: 'VARCHAR', ts: 'BIGINT', amount: 'BIGINT', page: 'VARCHAR'})`;
const query = mode === 'scan'
  ? `SELECT count(*) AS records, NULL AS windows, count(*) AS count_sum, sum(amount) AS amount_sum, ` +
    `bit_xor(hash(user, ts, amount, page)) AS fold FROM ${source}`
  : mode === 'scan-plain'
  ? `SELECT count(*) AS records, NULL AS windows, count(*) AS count_sum, sum(amount) AS amount_sum ` +
    `FROM ${source}`
  : `SELECT sum(c) AS records, count(*) AS windows, sum(c) AS count_sum, sum(s) AS amount_sum, ` +
    `NULL AS fold FROM (SELECT user, ts - ts % 10000 AS window_start, count(*) AS c, ` +
    `sum(amount) AS s FROM ${source} GROUP BY user, window_start)`;

const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
const connection = await instance.connect();
const started = process.hrtime.bigint();
const reader = await connection.runAndReadAll(query);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const row = reader.getRowObjectsJS()[0];
const number = (v) => (v === null || v === undefined ? null : Number(v));
console.log(JSON.stringify({
  mode, seconds, records: number(row.records), windows: number(row.windows),
  count_sum: number(row.count_sum), amount_sum: number(row.amount_sum),
}));
