#!/usr/bin/env bash
# Fails when a tracked C++ file differs from .clang-format (clang-format 14, Debian 12). With
# --fix, rewrites them instead. CI runs it without arguments.
set -euo pipefail
cd "$(dirname "$0")/../.."
mapfile -t files < <(git ls-files '*.h' '*.cc')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "check-format: files above differ from .clang-format; tools/dev/check-format.sh --fix rewrites them" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files match .clang-format"
