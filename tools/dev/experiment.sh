#!/usr/bin/env bash
# README command 1: install what is missing, build in Release, run the two-split experiment in
# both modes (split-level and operator-level watermarks).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tidemark
for mode in split operator; do
  echo "== jobs/two_splits_${mode}.yaml"
  build/release/tools/tidemark run "jobs/two_splits_${mode}.yaml"
done
