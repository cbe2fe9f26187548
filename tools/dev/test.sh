#!/usr/bin/env bash
# README command 2: install what is missing, build (Release, with tests) and run the test suite.
# Extra arguments go to ctest (e.g. `-L unit`).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release -j2 --label-exclude slow "$@"
