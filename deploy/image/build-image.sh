#!/bin/bash
# deploy/image/build-image.sh BINARY TAG: builds the OCI image TAG with
# podman from a built resetctl (`make image` runs it on the release build;
# tests/image.rs on the test build). The image holds only what `serve`
# reads: the binary (debug info stripped), the shared libraries `ldd`
# names and the loader, from the build machine's Debian packages (libc6,
# libgcc-s1), the CA bundle of its ca-certificates (the quota store's and
# e-mail's TLS use the system's roots), /etc/passwd and /etc/group with the
# user resetctl (10001), and the data dir owned by it. No shell, no time-zone
# data (the binary carries its own, chrono-tz), no package manager.
set -euo pipefail

binary=$1 tag=$2
here=$(cd "$(dirname "$0")" && pwd)
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
root=$context/rootfs
mkdir -p "$root/usr/bin" "$root/etc/ssl/certs" "$root/var/lib" "$context/var-lib/resetctl"

cp "$binary" "$root/usr/bin/resetctl"
objcopy --strip-debug --strip-unneeded "$root/usr/bin/resetctl"
chmod 0755 "$root/usr/bin/resetctl"
# Each library at the path the loader looks for it, as a file with its mode
# (the loader is executable).
for lib in $(ldd "$binary" | grep -o '/[^ ]*'); do
	for package in libc6 libgcc-s1; do
		if dpkg -S "$lib" 2> /dev/null | grep -q "^$package:"; then
			install -D -m "$(stat -L -c %a "$lib")" "$(readlink -f "$lib")" "$root$lib"
		fi
	done
	[ -e "$root$lib" ] || { echo "build-image.sh: $lib is not from libc6 or libgcc-s1" >&2; exit 1; }
done
install -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nresetctl:x:10001:10001:resetctl:/var/lib/resetctl:/usr/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nresetctl:x:10001:\n' > "$root/etc/group"
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"
chmod 0750 "$context/var-lib/resetctl"

version=$("$binary" --version | sed -n '1s/^resetctl //p')
podman build --quiet --format oci --file "$here/Containerfile" \
	--label org.opencontainers.image.title=resetctl \
	--label "org.opencontainers.image.version=$version" \
	--label org.opencontainers.image.description="Read-only HTTP JSON API of usage-limit reset records" \
	--tag "$tag" "$context" > /dev/null
echo "$tag"
