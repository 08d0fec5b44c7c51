#!/usr/bin/env bash
# Fails when generated code is out of date with the API types. It regenerates into the work tree
# (hack/update-codegen.sh) and compares every generated file before and after, naming each one that
# changed, appeared or disappeared. After a failure the tree holds the fresh output: review it and
# commit it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"

# snapshot prints "<sha256>  <path>" for every file code generation writes, sorted by path.
snapshot() {
	{
		find apis -type f -name 'zz_generated.*.go'
		# the protobuf step writes each field's protobuf struct tag into the types' files
		find apis -type f -name '*types.go'
		[[ -d generated ]] && find generated -type f
		[[ -f hack/api-rules.list ]] && echo hack/api-rules.list
	} | LC_ALL=C sort | while read -r f; do sha256sum "${f}"; done
}

BEFORE="$(mktemp -t vireo-codegen-before.XXXXXX)"
AFTER="$(mktemp -t vireo-codegen-after.XXXXXX)"
trap 'rm -f "${BEFORE}" "${AFTER}"' EXIT

snapshot >"${BEFORE}"
hack/update-codegen.sh
snapshot >"${AFTER}"

# Compare the two snapshots by path.
stale="$(awk '
	NR == FNR { before[$2] = $1; next }
	{
		after[$2] = $1
		if (!($2 in before)) print "  added (was missing from the tree): " $2
		else if (before[$2] != $1) print "  changed: " $2
	}
	END { for (p in before) if (!(p in after)) print "  removed (no longer generated): " p }
' "${BEFORE}" "${AFTER}" | LC_ALL=C sort)"

if [[ -n "${stale}" ]]; then
	echo "verify-codegen: generated code was out of date; these files differ from what the generators produce:" >&2
	echo "${stale}" >&2
	echo "verify-codegen: run 'make generate' (done now in this tree) and commit the result." >&2
	exit 1
fi
echo "verify-codegen: generated code is up to date."
