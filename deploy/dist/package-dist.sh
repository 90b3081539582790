#!/bin/bash
# deploy/dist/package-dist.sh BINARY OUTDIR: the release artefacts of a
# static resetctl (deploy/dist/build-binary.sh's) and this checkout, into
# OUTDIR (`make dist`: target/dist/), and their checksums:
#
#   resetctl-VERSION-x86_64-linux.tar.gz   the binary, its man pages, shell
#                                          completions, systemd units, the
#                                          sysusers and tmpfiles entries, a
#                                          sample config, README, CHANGELOG,
#                                          the licence texts (LICENSE-MIT,
#                                          LICENSE-APACHE, and COPYRIGHT: every
#                                          bundled crate's)
#   resetctl_VERSION_amd64.deb             deploy/debian/build-deb.sh
#   resetctl-VERSION-oci.tar               the image (deploy/image/build-image.sh),
#                                          `podman load -i` names it
#                                          localhost/resetctl:VERSION
#   SHA256SUMS                             sha256sum of the three
#
# The binary is stripped once, here, and that one file is what all three
# hold (and what OUTDIR/resetctl-VERSION-x86_64-linux/, the unpacked
# archive, keeps for the tests). Reproducible: the same binary and commit
# give the same bytes in any directory, at any time, under any umask: every
# time is SOURCE_DATE_EPOCH (the commit's), entries are sorted, owners are
# root, modes are set here.
set -euo pipefail

binary=$1 outdir=$2
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
SOURCE_DATE_EPOCH=$("$here/source-date-epoch.sh")
export SOURCE_DATE_EPOCH
export LC_ALL=C TZ=UTC
umask 022

version=$("$binary" --version | sed -n '1s/^resetctl //p')
name=resetctl-$version-x86_64-linux
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
rm -rf "${outdir:?}/$name" "$outdir/$name.tar.gz" "$outdir/resetctl_${version}_amd64.deb" \
	"$outdir/resetctl-$version-oci.tar" "$outdir/SHA256SUMS"
tree=$outdir/$name
mkdir -p "$tree"

install -m 0755 "$binary" "$tree/resetctl"
objcopy --strip-debug --strip-unneeded "$tree/resetctl"
if readelf --program-headers "$tree/resetctl" | grep -q 'program interpreter'; then
	echo "package-dist.sh: $binary is dynamically linked; a release holds the static build" >&2
	exit 1
fi
for doc in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE; do
	install -m 0644 "$checkout/$doc" "$tree/$doc"
done
# Every bundled crate's licence (DEP-5, the package's copyright file).
install -m 0644 "$checkout/deploy/debian/copyright" "$tree/COPYRIGHT"
install -m 0644 "$checkout/deploy/debian/config.toml" "$tree/config.toml"
install -d "$tree/man" "$tree/complete" "$tree/systemd"
install -m 0644 "$checkout"/man/*.1 "$tree/man/"
"$tree/resetctl" completions bash > "$tree/complete/resetctl.bash"
"$tree/resetctl" completions zsh > "$tree/complete/_resetctl"
"$tree/resetctl" completions fish > "$tree/complete/resetctl.fish"
install -m 0644 "$checkout"/deploy/systemd/*.service "$checkout"/deploy/systemd/*.socket \
	"$checkout"/deploy/systemd/*.timer "$checkout/deploy/systemd/resetctl.sysusers" "$tree/systemd/"
install -m 0644 "$checkout/deploy/debian/resetctl.tmpfiles" "$tree/systemd/resetctl.tmpfiles"
chmod 0644 "$tree"/complete/*
find "$tree" -type d -exec chmod 0755 {} +
tar --sort=name --format=gnu --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
	-C "$outdir" -cf - "$name" | gzip -9n > "$outdir/$name.tar.gz"

"$checkout/deploy/debian/build-deb.sh" "$tree/resetctl" "$version" "$outdir" > /dev/null

# The image is built under a tag of this run's own (two runs at once do not
# meet in podman's store) and removed from the store once saved.
tag=localhost/resetctl-dist:$$-$(date +%s%N)
trap 'podman rmi --force "$tag" > /dev/null 2>&1 || true' EXIT
"$checkout/deploy/image/build-image.sh" "$tree/resetctl" "$tag" "$outdir/resetctl-$version-oci.tar" > /dev/null

(cd "$outdir" && sha256sum "$name.tar.gz" "resetctl_${version}_amd64.deb" "resetctl-$version-oci.tar" > SHA256SUMS)
cat "$outdir/SHA256SUMS"
