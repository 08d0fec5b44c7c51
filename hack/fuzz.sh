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
	"./nodeagent FuzzLauncherStatus"
	"./nodeagent/streams FuzzRFBScreenshot"
	"./importer FuzzUploadProtocol"
	"./importer/uploadclient FuzzTransfer"
	"./nodeagent/uploadrelay FuzzUploadRelay"
	"./nodeagent/streams FuzzStreamFrames"
	"./launcher FuzzSyncRequest"
	"./importer FuzzImageInfo"
)
# fuzz runs one target. Go's fuzzing coordinator can report the end of -fuzztime itself as a
# failure ("context deadline exceeded", no failing input written: a race between its deadline
# and the cancellation of its workers, seen on a loaded machine); such a run is repeated once.
# Any other failure, and a second one, fails.
fuzz() {
	local pkg="$1" name="$2" log
	log="$(mktemp)"
	if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" "$pkg" 2>&1 | tee "$log"; then
		rm -f "$log"
		return 0
	fi
	if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written to' "$log"; then
		rm -f "$log"
		echo "fuzz: $pkg $name: the fuzzing engine timed out at its own deadline (no failing input); running it again"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" "$pkg"
		return
	fi
	rm -f "$log"
	return 1
}

for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "fuzz: $pkg $name for $duration"
	fuzz "$pkg" "$name"
done
