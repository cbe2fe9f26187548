#!/usr/bin/env bash
# ctest `flink_sql_parse`: every golden Flink SQL script (tests/golden/**/*.flink.sql, which the
# `flink_sql_goldens` test keeps equal to what `tidemark export --flink-sql` writes) must parse with
# dt-sql-parser's FlinkSQL grammar. Installs the parser with `npm ci` from this folder's
# package-lock.json into WORK_DIR (the build directory), once per lock file, then runs the
# self-test (a broken statement must be rejected) and the check.
#   usage: run_parse_check.sh WORK_DIR     (run from the repository root)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$1"
mkdir -p "$work"
if ! cmp -s "$here/package-lock.json" "$work/package-lock.json" || [ ! -d "$work/node_modules/dt-sql-parser" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$work/"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
fi
node "$here/parse_flink_sql.mjs" --modules "$work/node_modules" --self-test
mapfile -t files < <(find tests/golden -name '*.flink.sql' | sort)
if [ ${#files[@]} -eq 0 ]; then
  echo "no tests/golden/**/*.flink.sql files" >&2
  exit 1
fi
node "$here/parse_flink_sql.mjs" --modules "$work/node_modules" "${files[@]}"
