#!/bin/bash
# deploy/image/ca-bundle.sh: prints the path of the image's CA bundle,
# certifi's cacert.pem at the version and hash of requirements.txt beside
# this file, fetched with pip once into $CARGO_TARGET_DIR (or the
# checkout's target/) and kept there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${CARGO_TARGET_DIR:-$here/../../target}/ca-bundle
pin=$(grep -o 'certifi==[^ ]*' "$here/requirements.txt")
bundle=$cache/${pin#certifi==}/cacert.pem
if [ ! -s "$bundle" ]; then
	if ! python3 -m pip --version > /dev/null 2>&1; then
		echo "ca-bundle.sh: installing pip (apt-get install python3-pip)" >&2
		if [ "$(id -u)" = 0 ]; then apt_get="env DEBIAN_FRONTEND=noninteractive apt-get"; else apt_get="sudo DEBIAN_FRONTEND=noninteractive apt-get"; fi
		$apt_get update -qq >&2 && $apt_get install -y -qq python3-pip >&2
	fi
	rm -rf "$cache/download" && mkdir -p "$cache/download" "$(dirname "$bundle")"
	python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		--require-hashes -r "$here/requirements.txt" -d "$cache/download" >&2
	python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("certifi/cacert.pem"))' \
		"$cache"/download/certifi-*.whl > "$bundle.tmp"
	mv "$bundle.tmp" "$bundle"
fi
echo "$bundle"
