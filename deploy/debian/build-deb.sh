#!/bin/bash
# deploy/debian/build-deb.sh BINARY VERSION OUTDIR: builds
# OUTDIR/resetctl_VERSION_amd64.deb from a built resetctl and this checkout
# (`make dist` and `make deb` run it on the static release binary;
# tests/package.rs too), and prints its path. Made with dpkg-deb alone, so a
# fresh machine needs nothing built or installed for it: what goes where is
# this file.
#
#   /usr/bin/resetctl                      the binary (debug info stripped)
#   /lib/systemd/system/resetctl-*         the units of deploy/systemd, run from /usr/bin
#   /usr/lib/sysusers.d/resetctl.conf      the resetctl user (deploy/systemd/resetctl.sysusers)
#   /usr/lib/tmpfiles.d/resetctl.conf      /var/lib/resetctl, 0750, owned by it
#   /etc/resetctl/config.toml              the config file, a conffile: 0640 in a 0750
#                                          directory (it may hold secrets); postinst
#                                          gives both to the resetctl group
#   /usr/share/man/man1/resetctl*.1.gz     the man pages of man/
#   bash, zsh and fish completions         from `resetctl completions`
#   /usr/share/doc/resetctl/               copyright (every bundled crate's licence),
#                                          changelogs
#
# Reproducible: two builds of one commit from the same binary are the same
# bytes, wherever and whenever they run. Every mode is set here (not left
# to the umask); dpkg-deb sorts the entries, owns them by root and clamps
# their times to SOURCE_DATE_EPOCH (the commit's time), which also dates
# changelog.Debian; xz runs on one thread (its output depends on the
# number); Installed-Size counts bytes, not the file system's blocks.
set -euo pipefail
export LC_ALL=C
umask 022

binary=$1 version=$2 outdir=$3
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root/DEBIAN"

install -D -m 0755 "$binary" "$root/usr/bin/resetctl"
objcopy --strip-debug --strip-unneeded "$root/usr/bin/resetctl"

units=$root/lib/systemd/system
mkdir -p "$units"
for unit in "$checkout"/deploy/systemd/*.service "$checkout"/deploy/systemd/*.socket \
	"$checkout"/deploy/systemd/*.timer; do
	sed 's|/usr/local/bin/resetctl|/usr/bin/resetctl|g' "$unit" > "$units/$(basename "$unit")"
	chmod 0644 "$units/$(basename "$unit")"
done
install -D -m 0644 "$checkout/deploy/systemd/resetctl.sysusers" "$root/usr/lib/sysusers.d/resetctl.conf"
install -D -m 0644 "$here/resetctl.tmpfiles" "$root/usr/lib/tmpfiles.d/resetctl.conf"
install -D -m 0640 "$here/config.toml" "$root/etc/resetctl/config.toml"

man=$root/usr/share/man/man1
mkdir -p "$man"
for page in "$checkout"/man/*.1; do
	gzip -9n < "$page" > "$man/$(basename "$page").gz"
	chmod 0644 "$man/$(basename "$page").gz"
done
install -d "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
	"$root/usr/share/fish/vendor_completions.d"
"$binary" completions bash > "$root/usr/share/bash-completion/completions/resetctl"
"$binary" completions zsh > "$root/usr/share/zsh/vendor-completions/_resetctl"
"$binary" completions fish > "$root/usr/share/fish/vendor_completions.d/resetctl.fish"

doc=$root/usr/share/doc/resetctl
install -D -m 0644 "$here/copyright" "$doc/copyright"
gzip -9n < "$checkout/CHANGELOG.md" > "$doc/changelog.gz"
SOURCE_DATE_EPOCH=$("$checkout/deploy/dist/source-date-epoch.sh")
export SOURCE_DATE_EPOCH
date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
printf 'resetctl (%s) unstable; urgency=medium\n\n  * Built from the upstream release; see changelog.gz.\n\n -- resetctl developers <resetctl@example.org>  %s\n' \
	"$version" "$date" | gzip -9n > "$doc/changelog.Debian.gz"
find "$root" -type d -exec chmod 0755 {} +
# The config may hold a Redis password or an upstream token: never readable
# by others, not even between unpacking and postinst (which adds the group).
chmod 0750 "$root/etc/resetctl"
install -D -m 0644 "$here/lintian-overrides" "$root/usr/share/lintian/overrides/resetctl"

install -m 0755 "$here/postinst" "$here/prerm" "$here/postrm" "$root/DEBIAN/"
echo /etc/resetctl/config.toml > "$root/DEBIAN/conffiles"
# A static binary (make dist's) needs no C library; a glibc build needs the
# newest glibc symbol version it uses.
depends="systemd | systemd-standalone-sysusers, systemd | systemd-standalone-tmpfiles"
if readelf --program-headers "$root/usr/bin/resetctl" | grep -q 'program interpreter'; then
	glibc=$(objdump -T "$root/usr/bin/resetctl" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
	depends="libc6 (>= $glibc), libgcc-s1 (>= 4.2), $depends"
fi
size=$(du -s --apparent-size --block-size=1024 --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: resetctl
Version: $version
Architecture: amd64
Maintainer: resetctl developers <resetctl@example.org>
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Homepage: https://github.com/resetctl/resetctl
Description: read-only HTTP JSON API of usage-limit reset records
 resetctl publishes records of announced and completed usage-limit resets:
 it mirrors a public status feed (sync) or keeps an operator's ledger
 (record), publishes versioned snapshots, and serves them over HTTP with a
 per-client quota, feeds, a record stream, webhooks and a status page.
 .
 The systemd units are installed but not enabled; the operator's manual
 says which to enable.
CONTROL
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"

mkdir -p "$outdir"
deb=$outdir/resetctl_${version}_amd64.deb
# RESETCTL_DEB_COMPRESS=gzip: a quicker build (the tests); xz for releases.
dpkg-deb --root-owner-group --threads-max=1 "-Z${RESETCTL_DEB_COMPRESS:-xz}" --build "$root" "$deb" > /dev/null
echo "$deb"
