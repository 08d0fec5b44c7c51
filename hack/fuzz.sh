#!/usr/bin/env bash
# Runs every fuzz target for a bounded time each: hack/fuzz.sh [DURATION] (default 2m).
# `make test` runs it briefly, `make fuzz` for longer. A crash is written by go test to the
# package's testdata/fuzz/<Target>/ and fails the run: commit that file with the fix, and it
# becomes a regression test that every `go test` runs.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-2m}"
targets=(
	"./apis FuzzDecodeDefaultValidate"
	"./launcher/domain FuzzBuild"
	"./importer FuzzDetect"
	"./internal/podnetwork FuzzParseLayout"
)
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "fuzz: $pkg $name for $duration"
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" "$pkg"
done
