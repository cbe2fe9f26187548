#!/usr/bin/env bash
# Installs the Debian 12 packages tidemark builds with (nothing else is downloaded at build time).
# --dev adds the developer tools CI uses: clang-format and clang-tidy (tools/dev/check-format.sh,
# tools/dev/tidy.py) and ccache (a later build of the same sources recompiles only what changed).
set -euo pipefail
pkgs=(g++ cmake ninja-build pkg-config libboost-dev libspdlog-dev libfmt-dev libyaml-cpp-dev
      libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
      libabsl-dev libxxhash-dev prometheus-cpp-dev libsimdjson-dev librdkafka-dev libdivide-dev libre2-dev
      librocksdb-dev  # pipeline.state-backend: rocksdb
      chromium python3-prometheus-client  # the dashboard's browser test; /metrics parsed in daemon_test
      clang libclang-rt-14-dev  # clang + libFuzzer/sanitizer runtimes: the fuzz preset
      maven openjdk-17-jre-headless)  # the kafka_broker tests' Apache Kafka broker (tools/dev/kafka-broker.sh)
if [ "${1:-}" = "--dev" ]; then
  pkgs+=(clang-format clang-tidy ccache)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# node and npm for the Flink SQL parse check (tests/export: npm ci of dt-sql-parser); any install
# that provides the commands will do (a nodejs package that bundles npm, too).
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
