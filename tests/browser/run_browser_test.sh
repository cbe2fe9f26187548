#!/usr/bin/env bash
# ctest `dashboard_browser`: drives tidemarkd's web dashboard in headless Chromium (Debian's
# `chromium`) with playwright-core, installed by `npm ci` from this folder's package-lock.json into
# WORK_DIR (the build directory), once per lock file. Screenshots go to WORK_DIR/screenshots.
# Exit 77 (ctest: skipped) only when no Chromium is installed.
#   usage: run_browser_test.sh TIDEMARKD WORK_DIR     (run from the repository root)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tidemarkd="$1"
work="$2"
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$chromium" ]; then
  echo "SKIPPED: no Chromium on this machine (apt-get install chromium, or run tools/dev/install-deps.sh)" >&2
  exit 77
fi
mkdir -p "$work"
if ! cmp -s "$here/package-lock.json" "$work/package-lock.json" || [ ! -d "$work/node_modules/playwright-core" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$work/"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
fi
node "$here/dashboard_test.mjs" --tidemarkd "$tidemarkd" --chromium "$chromium" --modules "$work/node_modules" \
  --out "$work/screenshots"
