#!/usr/bin/env bash
# Exactly-once across kill -9 (issue 12, Done-when): runs JOB in `tidemarkd --state-dir`, SIGKILLs the
# daemon twice at random moments after at least 3 completed checkpoints, restarts it each time, waits
# until the job FINISHED, then checks the finished part files against an uninterrupted `tidemark run`
# of the same job: the sorted lines hash-equal, no line twice, no in-progress or pending file left.
#
#   tools/dev/kill9.sh [BUILD_DIR] [JOB] [OUT_DIR]
#
# BUILD_DIR: default build/release. JOB: default jobs/exactly_once_file_sink.yaml (a paced
# `sequence` source -> keyed tumbling count -> exactly-once file sink, checkpoint every 100 ms).
# OUT_DIR: the directory the job's file sink writes its part files to (default: the first `path:`
# in JOB). Part files whose name starts with '.' or contains "inprogress" or "pending" are not
# finished. KILL9_MIN_CHECKPOINTS (default 3): completed checkpoints before each kill. Run from the
# repository root. Exit 0 when every check holds, 1 otherwise, 77 when JOB
# does not exist (ctest: skipped).
set -euo pipefail

BUILD=${1:-build/release}
JOB=${2:-jobs/exactly_once_file_sink.yaml}
if [[ ! -f $JOB ]]; then
  echo "kill9: $JOB does not exist" >&2
  exit 77
fi
OUT=${3:-$(sed -n 's/^[[:space:]]*path:[[:space:]]*\([^[:space:]}]*\).*/\1/p' "$JOB" | head -1 | tr -d "'\"")}
if [[ -z $OUT ]]; then
  echo "kill9: no output directory given and no path: in $JOB" >&2
  exit 2
fi
MIN_CHECKPOINTS=${KILL9_MIN_CHECKPOINTS:-3}
BIN=$BUILD/tools
DIR=$(mktemp -d)
SOCK=$DIR/d.sock
STATE=$DIR/state
DAEMON=
cleanup() {
  [[ -n $DAEMON ]] && kill -9 "$DAEMON" 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

finished_lines() {  # every line of the finished part files, sorted
  find "$OUT" -type f ! -name '.*' ! -name '*inprogress*' ! -name '*pending*' -print0 | sort -z |
    xargs -0 -r cat | LC_ALL=C sort
}

start_daemon() {
  "$BIN/tidemarkd" --socket "$SOCK" --state-dir "$STATE" --no-self-check >"$DIR/daemon.out" 2>/dev/null &
  DAEMON=$!
  until grep -q listening "$DIR/daemon.out" 2>/dev/null; do
    kill -0 "$DAEMON" 2>/dev/null || { echo "kill9: tidemarkd did not start" >&2; exit 1; }
    sleep 0.05
  done
}

field() {  # field ID EXPR: one value of `status --json` as j, via python (no jq dependency); "?" if none
  local text
  text=$("$BIN/tidemark" --socket "$SOCK" status --json "$1" 2>/dev/null || true)
  python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$text" 2>/dev/null || echo "?"
}

# 1. The uninterrupted run.
rm -rf "$OUT" && mkdir -p "$OUT"
"$BIN/tidemark" run "$JOB" >/dev/null
expected=$(finished_lines | sha256sum | cut -d' ' -f1)
expected_count=$(finished_lines | wc -l)
expected_twice=$(finished_lines | uniq -d | wc -l)
echo "uninterrupted run: $expected_count lines, sha256 $expected"

# 2. The same job in the daemon, killed twice.
rm -rf "$OUT" && mkdir -p "$OUT"
start_daemon
ID=$("$BIN/tidemark" --socket "$SOCK" submit "$JOB")
echo "submitted $ID"
for kill in 1 2; do
  deadline=$((SECONDS + 120))
  until [[ $(field "$ID" "j['checkpoints']['completed']") =~ ^[0-9]+$ ]] &&
        (( $(field "$ID" "j['checkpoints']['completed']") >= MIN_CHECKPOINTS )); do
    if [[ $(field "$ID" "j['state']") != RUNNING ]] || (( SECONDS > deadline )); then
      echo "kill9: job $ID is $(field "$ID" "j['state']") before $MIN_CHECKPOINTS completed checkpoints (kill $kill)" >&2
      exit 1
    fi
    sleep 0.05
  done
  sleep "0.$(printf '%03d' $(( RANDOM % 1000 )))"
  last=$(field "$ID" "j['checkpoints']['last-completed-id']")
  if [[ $(field "$ID" "j['state']") != RUNNING ]]; then
    echo "kill9: job $ID ended before kill $kill; it must run longer" >&2
    exit 1
  fi
  kill -9 "$DAEMON"
  wait "$DAEMON" 2>/dev/null || true
  echo "kill $kill: SIGKILL to the daemon, last completed checkpoint it reported: $last"
  start_daemon
  # The daemon resumes its jobs right after it is ready: wait (10 s at most) for this restart's
  # log line (the log is appended to by every start, so count them).
  deadline=$((SECONDS + 10))
  until (( $(grep -cF "[job $ID] resuming" "$SOCK.log" 2>/dev/null || true) >= kill )); do
    if (( SECONDS > deadline )); then
      echo "kill9: the restarted daemon did not resume $ID" >&2; cat "$SOCK.log" >&2; exit 1
    fi
    sleep 0.05
  done
  grep -F "[job $ID] resuming" "$SOCK.log" | tail -1
done

# 3. Until FINISHED.
deadline=$((SECONDS + 600))
while :; do
  state=$(field "$ID" "j['state']")
  [[ $state == FINISHED ]] && break
  if [[ $state == FAILED || $state == CANCELED ]] || (( SECONDS > deadline )); then
    echo "kill9: job $ID ended $state: $(field "$ID" "j['failure-cause']")" >&2
    exit 1
  fi
  sleep 0.2
done
kill -TERM "$DAEMON"
wait "$DAEMON" 2>/dev/null || true
DAEMON=

# 4. Exactly once.
got=$(finished_lines | sha256sum | cut -d' ' -f1)
got_count=$(finished_lines | wc -l)
twice=$(finished_lines | uniq -d | wc -l)
left=$(find "$OUT" -type f \( -name '.*' -o -name '*inprogress*' -o -name '*pending*' \) | wc -l)
echo "after two kills:   $got_count lines, sha256 $got; lines twice: $twice; in-progress/pending files: $left"
if [[ $got != "$expected" || $twice -ne $expected_twice || $left -ne 0 ]]; then
  echo "kill9: FAILED" >&2
  exit 1
fi
echo "kill9: exactly once"
