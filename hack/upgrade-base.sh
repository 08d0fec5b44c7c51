#!/usr/bin/env bash
# Builds the release an upgrade starts from (make upgrade-base): the commit UPGRADE_FROM
# (default: the one hack/upgrade-from names) checked out with `git worktree` under
# _output/upgrade/src, and its own image build's images of Vireo's components under
# _output/upgrade/oci. The other images (etcd, pause, agnhost) are the current build's, linked.
# e2e's TestUpgradeWithRunningGuests installs from there, then upgrades to the current build.
# Cached: nothing is rebuilt while the commit is the same.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
from="${UPGRADE_FROM:-$(grep -v '^#' hack/upgrade-from | head -1)}"
if ! commit="$(git rev-parse --verify --quiet "${from}^{commit}")"; then
	if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
		# Without the history there is no release before: e2e installs this build directly
		# and says that the upgrade test did not run.
		echo "upgrade-base: WARNING: ${from} is not in this shallow clone (git fetch --unshallow); no upgrade test" >&2
		rm -f _output/upgrade/commit
		exit 0
	fi
	echo "upgrade-base: ${from} is no commit of this repository" >&2
	exit 1
fi
out=_output/upgrade
src="$out/src"
if [ -f "$out/commit" ] && [ "$(cat "$out/commit")" = "$commit" ] && [ -f "$out/oci/images.json" ]; then
	echo "upgrade base ${commit}: already built under $out"
	exit 0
fi
if [ ! -f _output/oci/images.json ]; then
	echo "upgrade-base: build the current images first (make oci)" >&2
	exit 1
fi
rm -f "$out/commit"
git worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
git worktree prune
mkdir -p "$out/oci"
git worktree add --detach "$src" "$commit"
# The current build's cache of layers and Debian packages, linked: only what changed is built.
if [ ! -d "$out/oci/.cache" ]; then
	cp -al _output/oci/.cache "$out/oci/.cache"
fi
vireo_images=$(cd _output/oci && ls -d vireo-* | paste -sd, -)
(cd "$src" && go run ./imagebuild/build --out "$root/$out/oci" --images "$vireo_images")
for dir in _output/oci/*/; do
	name="$(basename "$dir")"
	case "$name" in
	vireo-*) ;;
	*) rm -rf "${out:?}/oci/$name" && cp -al "$dir" "$out/oci/$name" ;;
	esac
done
echo "$commit" >"$out/commit"
echo "upgrade base ${commit}: built under $out"
