#!/bin/bash
# deploy/image/build-image.sh BINARY TAG [ARCHIVE]: builds the OCI image TAG
# with podman from a statically linked resetctl (the binary of `make dist`;
# `make image` too) and, given ARCHIVE, saves it
# there as an OCI archive that two builds of one commit make byte for byte
# the same. The image holds only what `serve` reads: the binary, the CA
# bundle (deploy/image/requirements.txt: Mozilla's roots as certifi ships
# them, pinned; the quota store's and e-mail's TLS use the system's roots),
# /etc/passwd and /etc/group with the user resetctl (10001), the data dir
# owned by it, and the licence texts in /usr/share/doc/resetctl/. No
# shell, no C library, no time-zone data (the binary carries its own,
# chrono-tz), no package manager.
#
# Reproducible: every file's mode is set here; podman stamps the image and
# its files with SOURCE_DATE_EPOCH (the commit's time); the archive is the
# saved layout tarred in name order with fixed owners and times.
set -euo pipefail

binary=$1 tag=$2 archive=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
SOURCE_DATE_EPOCH=$("$checkout/deploy/dist/source-date-epoch.sh")
export SOURCE_DATE_EPOCH
export LC_ALL=C
umask 022
if readelf --program-headers "$binary" | grep -q 'program interpreter'; then
	echo "build-image.sh: $binary is dynamically linked; the image holds a static build (make dist)" >&2
	exit 1
fi
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
root=$context/rootfs
mkdir -p "$root/usr/bin" "$root/etc/ssl/certs" "$root/usr/share/doc/resetctl" "$context/var-lib/resetctl"

install -m 0755 "$binary" "$root/usr/bin/resetctl"
# Debug info and unneeded symbols stripped (again, for make dist's binary,
# which it leaves the same bytes).
objcopy --strip-debug --strip-unneeded "$root/usr/bin/resetctl"
install -m 0644 "$("$here/ca-bundle.sh")" "$root/etc/ssl/certs/ca-certificates.crt"
# The licence texts: resetctl's, and every bundled crate's (DEP-5).
install -m 0644 "$checkout/LICENSE-MIT" "$checkout/LICENSE-APACHE" "$root/usr/share/doc/resetctl/"
install -m 0644 "$checkout/deploy/debian/copyright" "$root/usr/share/doc/resetctl/copyright"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nresetctl:x:10001:10001:resetctl:/var/lib/resetctl:/usr/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nresetctl:x:10001:\n' > "$root/etc/group"
chmod 0644 "$root/etc/passwd" "$root/etc/group"
find "$context" -type d -exec chmod 0755 {} +
chmod 0750 "$context/var-lib/resetctl"

version=$("$binary" --version | sed -n '1s/^resetctl //p')
podman build --quiet --format oci --file "$here/Containerfile" \
	--timestamp "$SOURCE_DATE_EPOCH" \
	--label org.opencontainers.image.title=resetctl \
	--label "org.opencontainers.image.version=$version" \
	--label org.opencontainers.image.description="Read-only HTTP JSON API of usage-limit reset records" \
	--label org.opencontainers.image.licenses="MIT OR Apache-2.0" \
	--tag "$tag" "$context" > /dev/null
if [ -n "$archive" ]; then
	layout=$context/layout
	podman save --quiet --format oci-dir --output "$layout" "$tag"
	# The name podman loads it as: localhost/resetctl:VERSION, whatever TAG was.
	python3 - "$layout/index.json" "localhost/resetctl:$version" <<'PY'
import json, sys
path, name = sys.argv[1], sys.argv[2]
index = json.load(open(path))
for manifest in index["manifests"]:
    manifest.setdefault("annotations", {})["org.opencontainers.image.ref.name"] = name
open(path, "w").write(json.dumps(index, sort_keys=True, separators=(",", ":")))
PY
	find "$layout" -type d -exec chmod 0755 {} +
	find "$layout" -type f -exec chmod 0644 {} +
	mkdir -p "$(dirname "$archive")"
	tar --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
		--mtime="@$SOURCE_DATE_EPOCH" -C "$layout" -cf "$archive" .
fi
echo "$tag"
