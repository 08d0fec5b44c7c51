#!/usr/bin/env bash
# Regenerates everything derived from the API types in apis/:
#   - deepcopy and defaulter functions (zz_generated.{deepcopy,defaults}.go); each group has one
#     version, whose types are also the server's internal version (apis/<group>/install), so no
#     conversion functions are generated;
#   - protobuf serialization of every group's types (zz_generated.pb.go, and the protobuf struct
#     tags of the types' files, which fix each field's number: hack/update-protobuf.sh);
#   - OpenAPI definitions in generated/openapi (API rule violations recorded in hack/api-rules.list);
#   - clientset, listers, informers and apply configurations under generated/.
# The generators are this module's Go tool dependencies (see the tool block of go.mod), built once
# into _output/tools. Running it twice in a row changes nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"

MODULE="github.com/vireo-dev/vireo"
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"
START_SECONDS="${SECONDS}"

log() { echo "update-codegen: $*" >&2; }

# Build the generators from this module's tool dependencies, so their versions are the ones go.mod
# pins (kube_codegen.sh would otherwise `go install` them from the code-generator module, with that
# module's own dependency versions).
export GOBIN="${ROOT}/_output/tools"
mkdir -p "${GOBIN}"
log "building generators into ${GOBIN#"${ROOT}/"}"
go install tool

# kube_codegen.sh runs `go install` for the generators before each step; they are already built,
# so that call is skipped. Every other go command passes through.
go() {
	if [[ "${1:-}" == "install" ]]; then
		return 0
	fi
	command go "$@"
}

CODEGEN_PKG="$(command go list -m -f '{{.Dir}}' k8s.io/code-generator)"
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

log "generating deepcopy and defaulter functions"
kube::codegen::gen_helpers --boilerplate "${BOILERPLATE}" apis

hack/update-protobuf.sh

# Each versioned package names its OpenAPI models through +k8s:openapi-model-package (the
# REST-friendly form of its Go path, which is also what applyconfiguration-gen looks types up by);
# openapi-gen writes the OpenAPIModelName methods the apiserver's definition namer relies on.
log "generating OpenAPI definitions"
touch hack/api-rules.list
kube::codegen::gen_openapi --boilerplate "${BOILERPLATE}" \
	--output-dir generated/openapi \
	--output-pkg "${MODULE}/generated/openapi" \
	--report-filename hack/api-rules.list \
	--update-report \
	--output-model-name-file zz_generated.model_name.go \
	--extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
	--extra-pkgs k8s.io/api/autoscaling/v1 \
	apis

# openapi-gen also writes the model-name file of the package it reads beside ours,
# k8s.io/api/autoscaling/v1, into Go's module cache (with this repository's header). Put that
# module back as it was downloaded: a changed module fails `go mod verify`.
api_dir="$(command go list -m -f '{{.Dir}}' k8s.io/api)"
chmod -R u+w "${api_dir}" && rm -rf "${api_dir}"
command go mod download k8s.io/api

SCHEMA="$(mktemp -t vireo-openapi-schema.XXXXXX)"
trap 'rm -f "${SCHEMA}"' EXIT
log "dumping the OpenAPI schema for apply configurations"
command go run ./hack/openapi-schema >"${SCHEMA}"

log "generating clientset, listers, informers and apply configurations"
# (kube_codegen.sh greps these for stale files first; make sure they exist on a fresh tree.)
mkdir -p generated/applyconfiguration generated/clientset generated/listers generated/informers
kube::codegen::gen_client --boilerplate "${BOILERPLATE}" \
	--output-dir generated \
	--output-pkg "${MODULE}/generated" \
	--with-watch \
	--with-applyconfig \
	--applyconfig-openapi-schema "${SCHEMA}" \
	apis

log "done in $((SECONDS - START_SECONDS))s"
