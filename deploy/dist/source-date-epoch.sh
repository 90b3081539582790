#!/bin/bash
# deploy/dist/source-date-epoch.sh: prints the time every release artefact
# is dated (SOURCE_DATE_EPOCH, reproducible-builds.org): the caller's
# SOURCE_DATE_EPOCH when set, else the time of the commit the checkout is
# at, else, in a source tarball made by `git archive` (no .git), the time
# deploy/dist/commit was stamped with. The one place that decides it; the
# scripts of deploy/ call it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
	echo "$SOURCE_DATE_EPOCH"
	exit 0
fi
# Only this checkout's own repository counts, not one it was unpacked in.
top=$(git -C "$checkout" rev-parse --show-toplevel 2> /dev/null || true)
if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(cd "$checkout" && pwd -P)" ]; then
	git -C "$checkout" log -1 --format=%ct
	exit 0
fi
read -r commit epoch < "$here/commit" || true
case $epoch in
'' | *[!0-9]*)
	echo "source-date-epoch.sh: neither a git checkout nor a tarball of git archive (deploy/dist/commit: $commit $epoch); set SOURCE_DATE_EPOCH" >&2
	exit 1
	;;
esac
echo "$epoch"
