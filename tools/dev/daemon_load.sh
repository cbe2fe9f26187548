#!/usr/bin/env bash
# Load test for tidemarkd (slow; not a ctest): N submissions of jobs/two_splits_split.yaml from C
# concurrent clients, each `tidemark submit --wait` (the CLI polls status until the job ended).
# Checks every job FINISHED with the expected report line and that none is lost, then compares the
# daemon's RSS at start (ready, after its self-check), right after the load (the history full:
# HISTORY finished jobs kept) and once the history has expired (--finished-job-ttl TTL, the daemon
# idle). Exits non-zero if a job is wrong or lost, or if the expired-history RSS is more than 10%
# over the start.
#
#   [DAEMON_ARGS="--no-self-check ..."] tools/dev/daemon_load.sh [BUILD_DIR] [SUBMISSIONS] [CLIENTS] [HISTORY] [TTL]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build/release}
N=${2:-1000}
C=${3:-16}
H=${4:-100}
TTL=${5:-5s}
BIN=$BUILD/tools
DIR=$(mktemp -d)
SOCK=$DIR/d.sock
trap 'kill -TERM $DAEMON 2>/dev/null || true; rm -rf "$DIR"' EXIT

"$BIN/tidemarkd" --socket "$SOCK" --state-dir "$DIR/state" --max-finished-jobs "$H" --finished-job-ttl "$TTL" ${DAEMON_ARGS:-} >"$DIR/daemon.out" 2>/dev/null &
DAEMON=$!
until grep -q listening "$DIR/daemon.out" 2>/dev/null; do sleep 0.05; done
rss() { awk '/VmRSS/ {print $2}' /proc/$DAEMON/status; }
retained() { "$BIN/tidemark" --socket "$SOCK" list --json | grep -c '"jid"' || true; }
RSS_START=$(rss)
EXPECTED=$(tail -1 tests/golden/two_splits_split.expected)

client() {
  local ok=0 bad=0
  for ((i = $1; i < N; i += C)); do
    out=$("$BIN/tidemark" --socket "$SOCK" submit --wait jobs/two_splits_split.yaml 2>&1) || true
    if [[ "$(sed -n 3p <<<"$out")" == "$EXPECTED" && "$(sed -n 2p <<<"$out")" == *FINISHED* ]]; then
      ok=$((ok + 1))
    else
      bad=$((bad + 1)); echo "client $1: unexpected output: $out" >&2
    fi
  done
  echo "$ok $bad"
}

START=$(date +%s.%N)
for ((c = 0; c < C; c++)); do client $c >"$DIR/client.$c" & done
wait $(jobs -p | grep -v "^$DAEMON$") 2>/dev/null || true
END=$(date +%s.%N)
OK=$(cat "$DIR"/client.* | awk '{s += $1} END {print s}')
BAD=$(cat "$DIR"/client.* | awk '{s += $2} END {print s}')
RSS_LOADED=$(rss)
RETAINED_LOADED=$(retained)
SUBMITTED=$(curl -s --unix-socket "$SOCK" http://x/metrics 2>/dev/null | awk '/^tidemark_jobs_submitted_total/ {print $2}' || true)
# Wait for the history to expire (TTL after the last job ended), at most a minute.
for ((i = 0; i < 600; i++)); do [[ $(retained) == 0 ]] && break; sleep 0.1; done
sleep 0.2  # the expirer trims the allocator right after dropping the jobs
RSS_TRIMMED=$(rss)
GROWTH=$(echo "scale=1; 100 * ($RSS_TRIMMED - $RSS_START) / $RSS_START" | bc)
echo "submissions=$N clients=$C finished_ok=$OK bad=$BAD seconds=$(echo "$END - $START" | bc)"
echo "daemon submitted_total=${SUBMITTED:-?} retained after the load=$RETAINED_LOADED (--max-finished-jobs $H," \
  "--finished-job-ttl $TTL), after expiry=$(retained)"
echo "rss_kb: at start $RSS_START, after the load $RSS_LOADED, history expired $RSS_TRIMMED;" \
  "after expiry vs start ${GROWTH}%"
kill -TERM $DAEMON
wait $DAEMON && echo "daemon exit=0"
[[ $OK == "$N" && $BAD == 0 ]]
(( $(echo "$GROWTH <= 10" | bc) ))
