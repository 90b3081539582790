#!/bin/bash
# deploy/dist/reproducible.sh [DIST]: `make reproducible`, the check that a
# release is reproducible, which the release workflow runs after `make
# dist` (a second compilation costs about 7 CPU-minutes, so `make test`
# does not; tests/dist.rs repackages the one binary instead). It builds
# the release artefacts a second time from the source tarball `git
# archive` makes of HEAD (no .git: the commit and its time come from
# deploy/dist/commit), in another directory, with another target dir,
# under another umask and at another time, and compares that
# SHA256SUMS with DIST's (by default target/dist/, make dist's). On a
# difference it prints what diffoscope shows (when installed) and keeps
# the second build for a look.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
dist=${1:-${CARGO_TARGET_DIR:-$checkout/target}/dist}
dist=$(cd "$dist" && pwd)
if [ -n "$(git -C "$checkout" status --porcelain --untracked-files=no)" ]; then
	echo "reproducible.sh: the checkout has uncommitted changes; the tarball of HEAD would not be what $dist was built from" >&2
	exit 1
fi
# The same name twice means the same commit (make dist names it in --version).
first=$("$dist"/resetctl-*-x86_64-linux/resetctl --version | sed -n 2p)
head=$(git -C "$checkout" rev-parse --short=12 HEAD)
[ "$first" = "commit: $head" ] || {
	echo "reproducible.sh: $dist was built from $first, not HEAD ($head): run make dist first" >&2
	exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/resetctl-reproducible.XXXXXX")
mkdir "$work/src"
git -C "$checkout" archive --format=tar HEAD | tar -xf - -C "$work/src"
(
	cd "$work/src"
	umask 027
	unset SOURCE_DATE_EPOCH
	TZ=Pacific/Auckland CARGO_TARGET_DIR="$work/target" deploy/dist/build-dist.sh "$work/dist" > /dev/null
)
if cmp -s "$dist/SHA256SUMS" "$work/dist/SHA256SUMS"; then
	echo "reproducible: a second build from the source tarball of $head, in $work, gave the same SHA256SUMS:"
	cat "$dist/SHA256SUMS"
	rm -rf "$work"
	exit 0
fi
echo "NOT reproducible: the second build ($work/dist) differs from $dist:" >&2
diff "$dist/SHA256SUMS" "$work/dist/SHA256SUMS" >&2 || true
while read -r _ name; do
	if ! cmp -s "$dist/$name" "$work/dist/$name"; then
		if command -v diffoscope > /dev/null; then
			diffoscope --max-text-report-size=200000 "$dist/$name" "$work/dist/$name" >&2 || true
		else
			echo "($name differs; diffoscope shows where: apt-get install diffoscope-minimal)" >&2
		fi
	fi
done < "$dist/SHA256SUMS"
exit 1
