#!/usr/bin/env bash
# tidemark's Flink reference harness (tools/reference/flink): runs things on Apache Flink 2.3.0
# itself, to check tidemark against it. Reference tooling only; tidemark never needs Java.
#
#   tools/dev/flink-reference.sh build [--force]                build the harness (Maven) unless up to date
#   tools/dev/flink-reference.sh experiment [--runs N] [--fire] the two-split experiment, both modes
#   tools/dev/flink-reference.sh scenarios FILE.jsonl...        scenario cases on Flink's operators
#   tools/dev/flink-reference.sh differential --seed S --cases N [--out FILE]
#                                                               random cases: Flink vs tidemark-scenarios
#   tools/dev/flink-reference.sh job JOB.yaml...                jobs on a Flink MiniCluster (DataStream API),
#                                                               their sinks' rows vs `tidemark run`
#   tools/dev/flink-reference.sh sql JOB.yaml...                `tidemark export --flink-sql` on Flink's local
#                                                               TableEnvironment, its rows vs `tidemark run`
#   tools/dev/flink-reference.sh compare FLINK.jsonl TIDEMARK.jsonl
#                                                               job's and sql's row comparison on two files
#                                                               (DOUBLE values within a relative 1e-12)
#   tools/dev/flink-reference.sh bench [--runs N] [--warmup N] [--warmup-count N] [--count N] [--data-dir D] [--no-heap] JOB.yaml...
#                                                               each bench job (jobs/bench) on `tidemark bench` and
#                                                               on a MiniCluster in the same run: a JSON line per job
#                                                               with tidemark_records_per_s, flink_records_per_s,
#                                                               ratio and both sides' counts and checksums; a job
#                                                               on `state-backend: rocksdb` runs on Flink's RocksDB
#                                                               backend (its budget as memory.fixed-per-slot, heap
#                                                               timers, files in FLINK_BENCH_ROCKSDB_DIR) and, unless
#                                                               --no-heap, on Flink's heap backend too, run by run
#                                                               (flink_heap_records_per_s, flink_rocksdb_to_heap)
#
# Every command but build builds the harness first when it is missing or older than its sources.
# Maven runs offline (-o) when the local repository already holds Flink 2.3.0, online otherwise.
# Needs Java 17 and Maven 3.8. Environment: TIDEMARK_SCENARIOS (the tidemark-scenarios binary for
# differential; default build/release/tests/scenarios/tidemark-scenarios), TIDEMARK (the tidemark
# binary for job and sql; default build/release/tools/tidemark), TIDEMARK_PRESET
# (default release), FLINK_REFERENCE_JAVA_OPTS (extra JVM options), FLINK_BENCH_HEAP (bench's
# -Xmx, default 3g; bench runs the JVM's default collector, G1, as Flink's TaskManagers do),
# FLINK_BENCH_ROCKSDB_DIR (bench's RocksDB local directory for jobs that name none; default
# build/flink-reference/bench-rocksdb).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
project="$root/tools/reference/flink"
target="$project/target"

die() {
  echo "flink-reference: $*" >&2
  exit 2
}

build() {
  command -v mvn >/dev/null || die "mvn not found (install maven and openjdk-17-jdk-headless)"
  command -v java >/dev/null || die "java not found (install openjdk-17-jdk-headless)"
  local repo="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}"
  local offline=()
  if [[ -f "$repo/org/apache/flink/flink-runtime/2.3.0/flink-runtime-2.3.0-tests.jar" &&
        -d "$repo/org/apache/maven/plugins/maven-dependency-plugin/3.8.1" &&
        -d "$repo/org/apache/maven/plugins/maven-clean-plugin/3.4.0" &&
        -d "$repo/org/mockito/mockito-core/5.19.0" ]]; then
    offline=(-o)
  fi
  # Maven's output goes to stderr: stdout is the commands' (bench prints JSON there).
  if ! (cd "$project" && mvn -q -B -Dstyle.color=never "${offline[@]}" clean package >&2); then
    if [[ ${#offline[@]} -gt 0 ]]; then
      echo "flink-reference: offline build failed, retrying online" >&2
      (cd "$project" && mvn -q -B -Dstyle.color=never clean package >&2)
    else
      exit 1
    fi
  fi
  touch "$target/.built"
}

up_to_date() {
  [[ -f "$target/.built" ]] || return 1
  [[ -z "$(find "$project/pom.xml" "$project/src" -newer "$target/.built" -print -quit)" ]]
}

# The JVM's heap and collector: small and serial for the reference checks; bench sets its own.
jvm_memory=(-XX:+UseSerialGC -Xmx768m)

run_java() {
  up_to_date || build
  # Flink's serializers reflect into java.base on Java 17.
  local opens=()
  for p in java.util java.lang java.lang.reflect java.io java.nio sun.nio.ch java.net \
           java.util.concurrent java.util.concurrent.atomic java.time java.text; do
    opens+=("--add-opens=java.base/$p=ALL-UNNAMED")
  done
  # shellcheck disable=SC2086
  exec java "${jvm_memory[@]}" "${opens[@]}" ${FLINK_REFERENCE_JAVA_OPTS:-} \
    -cp "$target/classes:$target/lib/*" dev.tidemark.reference.Main "$@"
}

[[ $# -ge 1 ]] || die "usage: flink-reference.sh build|experiment|scenarios|differential|job|sql|compare|bench ..."
command="$1"
shift
case "$command" in
  build)
    # Up to date (target/ newer than pom.xml and src/): nothing to do, unless --force.
    if [[ "${1:-}" == "--force" ]] || ! up_to_date; then
      build
    fi
    ;;
  experiment | scenarios | compare) run_java "$command" "$@" ;;
  differential)
    preset="${TIDEMARK_PRESET:-release}"
    export TIDEMARK_SCENARIOS="${TIDEMARK_SCENARIOS:-$root/build/$preset/tests/scenarios/tidemark-scenarios}"
    [[ -x "$TIDEMARK_SCENARIOS" ]] || die "tidemark-scenarios not found at $TIDEMARK_SCENARIOS (build it, or set TIDEMARK_SCENARIOS)"
    export TIDEMARK_BUILD_DIR="${TIDEMARK_BUILD_DIR:-$root/build/flink-reference}"
    run_java differential "$@"
    ;;
  bench)
    preset="${TIDEMARK_PRESET:-release}"
    export TIDEMARK="${TIDEMARK:-$root/build/$preset/tools/tidemark}"
    [[ -x "$TIDEMARK" ]] || die "tidemark not found at $TIDEMARK (build it, or set TIDEMARK)"
    jvm_memory=("-Xmx${FLINK_BENCH_HEAP:-3g}")
    # A job on `state-backend: rocksdb` without its own localdir: Flink's RocksDB files go here.
    export FLINK_BENCH_ROCKSDB_DIR="${FLINK_BENCH_ROCKSDB_DIR:-$root/build/flink-reference/bench-rocksdb}"
    run_java bench "$@"
    ;;
  job | sql)
    preset="${TIDEMARK_PRESET:-release}"
    export TIDEMARK="${TIDEMARK:-$root/build/$preset/tools/tidemark}"
    [[ -x "$TIDEMARK" ]] || die "tidemark not found at $TIDEMARK (build it, or set TIDEMARK)"
    # Job paths are taken as given: the exported SQL names the job's files relative to the
    # working directory, as `tidemark export` was given the job.
    run_java "$command" "$@"
    ;;
  *) die "unknown command '$command' (build, experiment, scenarios, differential, job, sql, compare, bench)" ;;
esac
