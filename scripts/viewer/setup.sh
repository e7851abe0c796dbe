#!/usr/bin/env bash
# Installs what the 3-D replay needs (docs/viewer.md): three.js, copied into every replay
# folder by `--replay`, and playwright-core, which drives Chromium in the replay's browser test
# (scripts/viewer/test.sh). Both come from the npm registry at the versions pinned in
# viewer/package-lock.json, into viewer/node_modules (not committed).
set -euo pipefail
cd "$(dirname "$0")/../../viewer"
if ! command -v npm >/dev/null 2>&1; then
  echo "npm is not installed: install Node.js 18 or later (it ships npm), then run $0 again" >&2
  exit 1
fi
npm ci --no-audit --no-fund
echo "three.js installed in $(pwd)/node_modules/three"
