#!/usr/bin/env bash
# Remakes the README's screenshots (docs/screenshots/) from realistic data:
# the bundled history (real records, snapshots/SOURCES.md) seeded as a new
# operator would, one upcoming schedule recorded as an operator note (so the
# countdown shows), and a check marked, then served on a clock frozen a day
# after the history's last reset and photographed in chromium at 1280 and
# 390 px in English and Chinese. `make screenshots` runs it after `make
# test-deps` and a release build.
#
# Usage: tests/browser/screenshots.sh RESETCTL OUT_DIR
set -euo pipefail

bin=$(realpath "$1")
out=$(realpath "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
chromium=/usr/bin/chromium
[ -x "$chromium" ] || { echo "chromium is missing: run make test-deps" >&2; exit 1; }
[ -d "$root/.browser/node_modules/playwright-core" ] || { echo "playwright-core is missing: run make test-deps" >&2; exit 1; }

# The day after the bundled history's last completion (2026-08-13 04:35 UTC).
now=2026-08-14T15:00:00.000Z
work=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

run() { env -i PATH="$PATH" HOME="$work/home" "$bin" --data-dir "$work/data" --now "$now" "$@" >/dev/null; }
run seed
run record schedule --operator --actor screenshots \
  --window "2026-08-17T16:00:00Z" "2026-08-17T20:00:00Z" --basis contextual_inference \
  --scope-plans all --scope-windows weekly \
  --text "Operator note: the weekly reset is expected Monday afternoon (Pacific time), as in the last weeks."
run mark-checked --actor screenshots --at "2026-08-14T14:30:00Z"

env -i PATH="$PATH" HOME="$work/home" "$bin" --data-dir "$work/data" --now "$now" \
  serve --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
server=$!
for _ in $(seq 100); do
  grep -q '^listening on ' "$work/serve.out" 2>/dev/null && break
  sleep 0.1
done
origin=$(sed -n 's/^listening on //p' "$work/serve.out" | head -1)
[ -n "$origin" ] || { cat "$work/serve.err" >&2; exit 1; }

mkdir -p "$work/home"
(cd "$work" && HOME="$work/home" TMPDIR="$work" node "$root/tests/browser/screenshots.mjs" \
  "$origin" "$out" "$root/.browser" "$chromium" "$now")
