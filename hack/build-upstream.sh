#!/usr/bin/env bash
# Builds the upstream binaries vireo-local runs (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl) from the pinned module in hack/tools into _output/bin.
# A second run with nothing changed does no work: a stamp records the inputs of the last build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
BIN="${ROOT}/_output/bin"
STAMP="${BIN}/.upstream-stamp"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl)

inputs="$(cd "${ROOT}/hack/tools" && cat go.mod go.sum etcd/main.go && go version)"
want="$(printf '%s' "${inputs}" | sha256sum | cut -d' ' -f1)"
have="$(cat "${STAMP}" 2>/dev/null || true)"
missing=0
for b in "${BINARIES[@]}"; do [ -x "${BIN}/${b}" ] || missing=1; done
if [ "${want}" = "${have}" ] && [ "${missing}" = 0 ]; then
	echo "upstream binaries are current (${BINARIES[*]})"
	exit 0
fi

echo "building upstream Kubernetes v1.37.2 and etcd into _output/bin: ${BINARIES[*]}"
echo "(the first build takes about 8-10 minutes on 2 cores; later builds reuse Go's cache)"
start=${SECONDS}
mkdir -p "${BIN}"
cd "${ROOT}/hack/tools"
go build -trimpath -o "${BIN}/" ./etcd \
	k8s.io/kubernetes/cmd/kube-apiserver \
	k8s.io/kubernetes/cmd/kube-controller-manager \
	k8s.io/kubernetes/cmd/kube-scheduler \
	k8s.io/kubernetes/cmd/kubectl
echo "${want}" >"${STAMP}"
echo "upstream binaries built in $((SECONDS - start))s"
