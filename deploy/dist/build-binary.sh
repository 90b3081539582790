#!/bin/bash
# deploy/dist/build-binary.sh: builds the release binary of the checkout
# this file is in for x86_64-unknown-linux-musl, statically linked, the way
# every release artefact holds it (`make dist`), and prints its path
# (TARGET/x86_64-unknown-linux-musl/release/resetctl, TARGET being
# $CARGO_TARGET_DIR or the checkout's target/).
#
# Reproducible: the same commit gives the same bytes in any directory, at
# any time, for any user.
# - Every path that would reach the binary is remapped (--remap-path-prefix
#   for Rust, -ffile-prefix-map for the C of zstd and ring): the target dir
#   (the build scripts' OUT_DIR) to /target, Cargo's home (the crates'
#   sources) to /cargo, rustup's (the standard library's) to /rustup.
#   Cargo passes the workspace's own sources by relative path.
# - SOURCE_DATE_EPOCH is the commit's time, for whatever reads it.
# - One codegen unit (the release profile), so no split depends on timing.
# What it needs is installed when missing: the target's standard library
# (rustup target add) and musl-gcc (Debian's musl-tools, for zstd and ring).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
triple=x86_64-unknown-linux-musl
cargo=${CARGO:-cargo}

if ! rustup target list --installed 2> /dev/null | grep -qx "$triple"; then
	echo "build-binary.sh: installing the $triple standard library (rustup target add)" >&2
	rustup target add "$triple" >&2
fi
if ! command -v musl-gcc > /dev/null; then
	echo "build-binary.sh: installing musl-gcc (apt-get install musl-tools)" >&2
	if [ "$(id -u)" = 0 ]; then apt_get="env DEBIAN_FRONTEND=noninteractive apt-get"; else apt_get="sudo DEBIAN_FRONTEND=noninteractive apt-get"; fi
	$apt_get update -qq >&2 && $apt_get install -y -qq musl-tools >&2
fi

target_dir=${CARGO_TARGET_DIR:-$checkout/target}
mkdir -p "$target_dir"
target_dir=$(cd "$target_dir" && pwd)
cargo_home=${CARGO_HOME:-$HOME/.cargo}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
SOURCE_DATE_EPOCH=$("$here/source-date-epoch.sh")
export SOURCE_DATE_EPOCH
remap="--remap-path-prefix=$target_dir=/target --remap-path-prefix=$cargo_home=/cargo --remap-path-prefix=$rustup_home=/rustup"
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="$remap"
prefix_map="-ffile-prefix-map=$target_dir=/target -ffile-prefix-map=$cargo_home=/cargo"
export CFLAGS_x86_64_unknown_linux_musl="$prefix_map"
export CC_x86_64_unknown_linux_musl=musl-gcc

(cd "$checkout" && "$cargo" build --release --locked --target "$triple" ${DIST_CARGO_ARGS:-} >&2)
echo "$target_dir/$triple/release/resetctl"
