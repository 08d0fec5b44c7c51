#!/usr/bin/env bash
# `make down`: stop what `make up` started; data is kept (vireo-local down --purge deletes it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x _output/bin/vireo-local ]; then _output/bin/vireo-local down "$@"; else echo "nothing to stop: _output/bin/vireo-local not built"; fi
