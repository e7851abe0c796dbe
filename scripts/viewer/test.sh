#!/usr/bin/env bash
# The 3-D replay in a real browser (docs/viewer.md): writes the replays of the falling sphere
# and of the 40-body clutter with the release binary, then viewer/test/browser.mjs opens each
# through `stiction view` in headless Chromium, takes screenshots at two times and checks that
# the bodies are drawn where trajectory.csv says. Needs Chromium ($CHROMIUM, default
# /usr/bin/chromium) and scripts/viewer/setup.sh; .ci/run provides both. The screenshots are
# kept in target/viewer-screenshots/.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f viewer/node_modules/three/build/three.module.js ] || [ ! -d viewer/node_modules/playwright-core ]; then
  scripts/viewer/setup.sh
fi
cargo build --release --bin stiction
bin=target/release/stiction
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" simulate falling-sphere --replay --out "$out/falling-sphere" --quiet
"$bin" simulate clutter --replay --out "$out/clutter" --quiet
node viewer/test/browser.mjs "$bin" target/viewer-screenshots \
  "$out/falling-sphere:sphere" "$out/clutter:top-sphere"
