#!/bin/bash
# deploy/dist/build-dist.sh [OUTDIR]: `make dist`. The static release
# binary (deploy/dist/build-binary.sh), then the release artefacts made
# from it and their SHA256SUMS (deploy/dist/package-dist.sh) in OUTDIR,
# by default target/dist/ ($CARGO_TARGET_DIR/dist/ when that is set).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${CARGO_TARGET_DIR:-$here/../../target}
outdir=${1:-$target/dist}
binary=$("$here/build-binary.sh")
"$here/package-dist.sh" "$binary" "$outdir"
