#!/usr/bin/env bash
# ctest `flink_sql_goldens`: `tidemark export --flink-sql` over every job in jobs/ and jobs/bench/.
# Per job jobs/<dir>/<name>.yaml, with its goldens at tests/golden/<dir>/<name>.flink.{sql,err}:
#   - exports (exit 0)           -> stdout must equal <name>.flink.sql, and there is no <name>.flink.err;
#   - fails (exit 2)             -> stderr must equal <name>.flink.err, and if <name>.flink.sql
#                                   exists, `--best-effort` must write exactly it (exit 0).
# A job that does not compile (a C++ user operator type) has only a .flink.err.
#   usage: check_goldens.sh TIDEMARK_BINARY [--update]    (run from the repository root)
set -euo pipefail
tidemark="$1"
update="${2:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
for job in jobs/*.yaml jobs/bench/*.yaml; do
  base="tests/golden/${job#jobs/}"
  base="${base%.yaml}"
  rc=0
  "$tidemark" export --flink-sql "$job" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [ "$update" = "--update" ]; then
    rm -f "$base.flink.sql" "$base.flink.err"
    if [ $rc -eq 0 ]; then
      cp "$tmp/out" "$base.flink.sql"
    else
      cp "$tmp/err" "$base.flink.err"
      if "$tidemark" export --flink-sql --best-effort "$job" >"$tmp/best" 2>/dev/null; then
        cp "$tmp/best" "$base.flink.sql"
      fi
    fi
    continue
  fi
  if [ $rc -eq 0 ]; then
    if [ -e "$base.flink.err" ]; then
      fail "$job" "exports, but $base.flink.err expects it to fail"
    elif ! diff -u "$base.flink.sql" "$tmp/out" >"$tmp/diff" 2>&1; then
      fail "$job" "export differs from $base.flink.sql"; cat "$tmp/diff"
    else
      passed=$((passed + 1))
    fi
    continue
  fi
  if [ $rc -ne 2 ]; then
    fail "$job" "exit code $rc (expected 0 or 2)"; cat "$tmp/err"
    continue
  fi
  if [ ! -e "$base.flink.err" ]; then
    fail "$job" "export fails but there is no $base.flink.err"; cat "$tmp/err"
    continue
  fi
  if ! diff -u "$base.flink.err" "$tmp/err" >"$tmp/diff" 2>&1; then
    fail "$job" "messages differ from $base.flink.err"; cat "$tmp/diff"
    continue
  fi
  if [ -e "$base.flink.sql" ]; then
    brc=0
    "$tidemark" export --flink-sql --best-effort "$job" >"$tmp/best" 2>/dev/null || brc=$?
    if [ $brc -ne 0 ]; then
      fail "$job" "--best-effort exit code $brc"
      continue
    fi
    if ! diff -u "$base.flink.sql" "$tmp/best" >"$tmp/diff" 2>&1; then
      fail "$job" "--best-effort export differs from $base.flink.sql"; cat "$tmp/diff"
      continue
    fi
  fi
  passed=$((passed + 1))
done
# A golden whose job is gone would be checked by nothing: every golden needs its job.
while IFS= read -r golden; do
  rel="${golden#tests/golden/}"
  job="jobs/${rel%.flink.*}.yaml"
  if [ ! -e "$job" ]; then
    if [ "$update" = "--update" ]; then
      rm -f "$golden"
    else
      fail "$golden" "no job $job"
    fi
  fi
done < <(find tests/golden -name '*.flink.sql' -o -name '*.flink.err' | sort)
[ "$update" = "--update" ] && { echo "goldens written"; exit 0; }
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
