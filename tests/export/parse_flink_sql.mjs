// Parses Flink SQL scripts with dt-sql-parser's FlinkSQL grammar (an ANTLR grammar of Flink SQL)
// and fails on the first syntax error, printing file:line:column and the parser's message.
//
//   node parse_flink_sql.mjs --modules DIR FILE...   parse each FILE (exit 1 on any error)
//   node parse_flink_sql.mjs --modules DIR --self-test
//       checks that the check can fail: a good script must parse and a deliberately broken one
//       (a misspelt keyword, a missing parenthesis) must be rejected.
//
// DIR is the node_modules folder that `npm ci` filled from this folder's package-lock.json
// (tests/export/run_parse_check.sh does that in the build directory).
import { register } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// dt-sql-parser's ESM build imports directories and extensionless files (it is made for
// bundlers); this resolve hook lets plain node load it.
register('data:text/javascript,' + encodeURIComponent(`
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (e) {
    if (e.code !== 'ERR_UNSUPPORTED_DIR_IMPORT' && e.code !== 'ERR_MODULE_NOT_FOUND') throw e;
    for (const suffix of ['.js', '/index.js']) {
      try { return await next(specifier + suffix, context); } catch {}
    }
    throw e;
  }
}`));

const args = process.argv.slice(2);
const m = args.indexOf('--modules');
if (m < 0 || m + 1 >= args.length) {
  console.error('usage: parse_flink_sql.mjs --modules NODE_MODULES_DIR (--self-test | FILE...)');
  process.exit(2);
}
const modules = args[m + 1];
args.splice(m, 2);
const { FlinkSQL } = await import(pathToFileURL(join(modules, 'dt-sql-parser', 'dist', 'index.js')).href);
const parser = new FlinkSQL();

// The parser's syntax errors for `sql` (its error listener also prints to stderr; silence that).
function errors(sql) {
  const log = console.error;
  console.error = () => {};
  try {
    return parser.validate(sql);
  } finally {
    console.error = log;
  }
}

function check(name, sql) {
  const found = errors(sql);
  for (const e of found.slice(0, 5)) {
    console.log(`${name}:${e.startLine}:${e.startColumn}: syntax error: ${e.message}`);
  }
  return found.length === 0;
}

if (args.includes('--self-test')) {
  const good = "CREATE TABLE `t` (`ts` BIGINT, `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),\n" +
      "  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '1.001' SECOND) WITH ('connector' = 'datagen');\n" +
      "SELECT `window_start`, COUNT(*) FROM TABLE(TUMBLE(TABLE `t`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND))\n" +
      "GROUP BY `window_start`, `window_end`;\n";
  const broken = [
    ['misspelt keyword', good.replace('SELECT', 'SELEC')],
    ['missing parenthesis', good.replace("INTERVAL '1' SECOND))", "INTERVAL '1' SECOND)")],
    ['interval precision the grammar lacks', good.replace("'1.001' SECOND", "'1.001' SECOND(4, 3)")],
  ];
  let ok = check('self-test good', good);
  if (!ok) console.log('FAIL: the good script was rejected');
  for (const [what, sql] of broken) {
    if (errors(sql).length === 0) {
      console.log(`FAIL: the broken script (${what}) parsed`);
      ok = false;
    } else {
      console.log(`ok: the broken script (${what}) is rejected`);
    }
  }
  console.log(ok ? '4 passed, 0 failed' : 'self-test FAILED');
  process.exit(ok ? 0 : 1);
}

if (args.length === 0) {
  console.error('no files to parse');
  process.exit(2);
}
let failed = 0;
for (const file of args) {
  if (!check(file, readFileSync(file, 'utf8'))) {
    failed++;
  }
}
console.log(`${args.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
