#!/usr/bin/env bash
# Load test for tidemarkd (slow; not a ctest): N submissions of jobs/two_splits_split.yaml from C
# concurrent clients, each `tidemark submit --wait` (the CLI polls status until the job ended).
# Checks every job FINISHED with the expected report line, that none is lost, and compares the
# daemon's RSS at start, after a warm-up that fills the history, and after the load (the history
# trimmed back to its bound, the daemon idle).
#
#   tools/dev/daemon_load.sh [BUILD_DIR] [SUBMISSIONS] [CLIENTS] [HISTORY]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
N=${2:-1000}
C=${3:-16}
H=${4:-100}
BIN=$BUILD/tools
DIR=$(mktemp -d)
SOCK=$DIR/d.sock
trap 'kill -TERM $DAEMON 2>/dev/null || true; rm -rf "$DIR"' EXIT

"$BIN/tidemarkd" --socket "$SOCK" --max-finished-jobs "$H" >"$DIR/daemon.out" 2>/dev/null &
DAEMON=$!
until grep -q listening "$DIR/daemon.out" 2>/dev/null; do sleep 0.05; done
rss() { awk '/VmRSS/ {print $2}' /proc/$DAEMON/status; }
# Baselines: right after start, and after a warm-up that fills the history (H finished jobs),
# so that what follows measures growth beyond a full, trimmed history.
RSS_EMPTY=$(rss)
for ((i = 0; i < H; i++)); do "$BIN/tidemark" --socket "$SOCK" submit --wait jobs/two_splits_split.yaml >/dev/null; done
RSS0=$(rss)
EXPECTED=$(tail -1 jobs/two_splits_split.expected)

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
RSS1=$(rss)
SUBMITTED=$(curl -s --unix-socket "$SOCK" http://x/metrics 2>/dev/null | awk '/^tidemark_jobs_submitted_total/ {print $2}' || true)
RETAINED=$("$BIN/tidemark" --socket "$SOCK" list --json | grep -c '"jid"' || true)
echo "submissions=$N clients=$C finished_ok=$OK bad=$BAD seconds=$(echo "$END - $START" | bc)"
echo "daemon submitted_total=${SUBMITTED:-?} (incl. $H warm-up) retained_in_history=$RETAINED"
echo "rss_kb: at start $RSS_EMPTY, history full $RSS0, after the load $RSS1;" \
  "growth over the full history $(echo "scale=1; 100 * ($RSS1 - $RSS0) / $RSS0" | bc)%," \
  "over the start $(echo "scale=1; 100 * ($RSS1 - $RSS_EMPTY) / $RSS_EMPTY" | bc)%"
kill -TERM $DAEMON
wait $DAEMON && echo "daemon exit=0"
[[ $OK == "$N" && $BAD == 0 ]]
