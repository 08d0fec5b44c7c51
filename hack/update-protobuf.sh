#!/usr/bin/env bash
# Generates the protobuf serialization (application/vnd.kubernetes.protobuf) of every API group's
# types with Kubernetes' go-to-protobuf: zz_generated.pb.go in each package, and a protobuf
# struct tag on every field of its types' files. A field keeps the number
# its tag gives it; a new field gets the next free one. Needs protoc (Debian's protobuf-compiler,
# installed by `make deps`); the generators come from go.mod's tool block, built into
# _output/tools by hack/update-codegen.sh, which calls this script.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"

MODULE="github.com/vireo-dev/vireo"
PACKAGES=(apis/cdi/v1beta1 apis/core/v1 apis/instancetype/v1beta1 apis/migrations/v1alpha1 apis/pool/v1beta1)

log() { echo "update-protobuf: $*" >&2; }

if ! command -v protoc >/dev/null; then
	echo "update-protobuf: protoc is not installed: run 'make deps' (Debian's protobuf-compiler)" >&2
	exit 1
fi
export GOBIN="${ROOT}/_output/tools"
if [[ ! -x "${GOBIN}/go-to-protobuf" || ! -x "${GOBIN}/protoc-gen-gogo" || ! -x "${GOBIN}/goimports" ]]; then
	go install tool
fi
export PATH="${GOBIN}:${PATH}"

# go-to-protobuf writes into a GOPATH-shaped tree and finds imported .proto files by import path:
# link this module and the modules whose .proto files ours import into such trees.
WORK="$(mktemp -d -t vireo-protobuf.XXXXXX)"
trap 'rm -rf "${WORK}"' EXIT
mkdir -p "${WORK}/src/$(dirname "${MODULE}")" "${WORK}/include/k8s.io" "${WORK}/include/github.com/gogo"
ln -s "${ROOT}" "${WORK}/src/${MODULE}"
for m in api apimachinery; do
	ln -s "$(go list -m -f '{{.Dir}}' "k8s.io/${m}")" "${WORK}/include/k8s.io/${m}"
done
ln -s "$(go list -m -f '{{.Dir}}' github.com/gogo/protobuf)" "${WORK}/include/github.com/gogo/protobuf"

# The previous output goes first: the generator type-checks the packages and writes its own.
for p in "${PACKAGES[@]}"; do
	rm -f "${p}/zz_generated.pb.go"
done

# go-to-protobuf deletes the generated.pb.go of every package it generates, so every package it
# only reads is marked '-' (its defaults would regenerate apimachinery's, in the module cache).
APIMACHINERY="-k8s.io/apimachinery/pkg/util/intstr,-k8s.io/apimachinery/pkg/api/resource,-k8s.io/apimachinery/pkg/runtime/schema,-k8s.io/apimachinery/pkg/runtime,-k8s.io/apimachinery/pkg/apis/meta/v1"
INPUTS="-k8s.io/api/core/v1"
for p in "${PACKAGES[@]}"; do
	INPUTS+=",${MODULE}/${p}"
done
log "generating ${PACKAGES[*]}"
go-to-protobuf --go-header-file hack/boilerplate.go.txt \
	--output-dir "${WORK}/src" \
	--proto-import "${WORK}/include" \
	--apimachinery-packages "${APIMACHINERY}" \
	--packages "${INPUTS}" 2> >(grep -v -e ' protoc -I ' -e ' goimports -w ' -e ' gofmt -s -w ' >&2)

# Only the Go code is kept, named as every generated file of this repository is; the .proto
# files are the generator's intermediate.
for p in "${PACKAGES[@]}"; do
	mv "${p}/generated.pb.go" "${p}/zz_generated.pb.go"
	rm -f "${p}/generated.proto"
done
go mod verify >/dev/null
