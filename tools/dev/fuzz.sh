#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang, ASan+UBSan) and runs each for SECONDS
# (default 60) on its corpus; fails on any crash, leak, sanitizer report or timeout.
#
#   tools/dev/fuzz.sh [SECONDS] [TARGET...]     e.g. tools/dev/fuzz.sh 3600 fuzz_expression
#
# FUZZ_TIMEOUT=S sets the per-input limit (default 10 s of wall time; raise it for runs at a low
# priority beside other work). FUZZ_PARALLEL=N runs N targets at a time (default 1: one after the
# other). A summary line per target gives executions, coverage, corpus size and peak RSS.
#
# Corpus: tests/fuzz/corpus/<target>/ (committed seeds) plus, for the job loader, the Flink SQL
# export and the request path, every jobs/*.yaml (raw, and as a POST /jobs request), copied into a
# work corpus under build/fuzz/corpus/<target>/ that grows between runs. Findings are written to
# build/fuzz/findings/<target>/ (crash-*, leak-*, timeout-*, oom-*); reproduce one with
# `build/fuzz/tests/fuzz/<target> FILE`.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_job_loader fuzz_expression fuzz_trigger fuzz_json_lines fuzz_rest_request fuzz_flink_sql_export)
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}"

work=build/fuzz
# Each input at most 10 s and 2 GB; the request path's bodies are up to the daemon's 1 MiB limit.
# UBSan reports are fatal (the build uses -fno-sanitize-recover=all); leaks are checked at exit.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
# Runs one target; its exit status is the fuzzer's.
run_target() {
  local t=$1 corpus=$work/corpus/$1 findings=$work/findings/$1 max_len
  mkdir -p "$corpus" "$findings"
  if [ -d "tests/fuzz/corpus/$t" ]; then
    cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  fi
  case $t in
    fuzz_job_loader|fuzz_flink_sql_export)
      for f in jobs/*.yaml jobs/bench/*.yaml; do
        [ -f "$f" ] && cp -n "$f" "$corpus/$(basename "$f")" 2>/dev/null || true
      done
      max_len=65536;;
    fuzz_rest_request)
      for f in jobs/*.yaml; do
        out=$corpus/post-$(basename "$f")
        [ -f "$out" ] || printf 'POST /jobs?file=%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s' \
          "$(basename "$f")" "$(wc -c <"$f")" "$(cat "$f")" >"$out"
      done
      max_len=65536;;
    *) max_len=4096;;
  esac
  echo "== $t: ${seconds}s, corpus $(find "$corpus" -type f | wc -l) files"
  "$work/tests/fuzz/$t" "$corpus" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -max_len="$max_len" -artifact_prefix="$findings/" -print_final_stats=1 >"$work/findings/$t.log" 2>&1
}

# One line per target from its log: executions, coverage, corpus, peak RSS.
summary() {
  local log=$work/findings/$1.log
  printf '%s: %s execs, %s, corpus %s files, peak rss %s MB\n' "$1" \
    "$(grep -oP 'stat::number_of_executed_units:\s+\K[0-9]+' "$log" || echo '?')" \
    "$(grep -oP '^#[0-9]+.*\Kcov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || echo 'cov: ?')" \
    "$(find "$work/corpus/$1" -type f | wc -l)" \
    "$(grep -oP 'stat::peak_rss_mb:\s+\K[0-9]+' "$log" || echo '?')"
}

failed=()
parallel=${FUZZ_PARALLEL:-1}
pids=()
names=()
reap() {  # waits for the oldest running target
  local t=${names[0]}
  if ! wait "${pids[0]}"; then
    failed+=("$t")
    tail -60 "$work/findings/$t.log"
  fi
  summary "$t"
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
}
for t in "${targets[@]}"; do
  while [ ${#pids[@]} -ge "$parallel" ]; do reap; done
  run_target "$t" &
  pids+=($!)
  names+=("$t")
done
while [ ${#pids[@]} -gt 0 ]; do reap; done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $work/findings/)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, no crash, leak or timeout"
