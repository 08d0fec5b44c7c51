#!/usr/bin/env bash
# Builds the upstream binaries vireo-local runs (etcd, kube-apiserver, kube-controller-manager,
# kube-proxy, kube-scheduler, kubectl) from the pinned module in hack/tools into _output/bin.
# A second run with nothing changed does no work: a stamp records the inputs of the last build
# (the module files, the sources here, the list of binaries and the linker flags). When the stamp is off or a
# binary is missing, go build runs for all of them but relinks only those whose inputs changed:
# it leaves an existing binary whose build ID already matches, so adding a binary to the list
# compiles and links just that one (and the packages it adds) on a warm Go build cache.
# The first build is long, so it reports what it is doing and how far along it is every
# PROGRESS_EVERY seconds (default 15): packages compiled out of the packages involved.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
BIN="${ROOT}/_output/bin"
STAMP="${BIN}/.upstream-stamp"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-proxy kube-scheduler kubectl)
PACKAGES=(./etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
	k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
PROGRESS_EVERY="${PROGRESS_EVERY:-15}"

# The version the Kubernetes binaries report (--version, /version, client user agents), set as
# the release build does: without it they say v0.0.0-master.
KUBE_VERSION="$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "${ROOT}/hack/tools/go.mod")"
if [[ ! ${KUBE_VERSION} =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
	echo "hack/tools/go.mod must require k8s.io/kubernetes at a release (vX.Y.Z), not '${KUBE_VERSION}'" >&2
	exit 1
fi
LDFLAGS=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	LDFLAGS+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=${BASH_REMATCH[1]}"
	LDFLAGS+=" -X ${pkg}.gitMinor=${BASH_REMATCH[2]} -X ${pkg}.gitTreeState=clean"
done

inputs="$(cd "${ROOT}/hack/tools" && cat go.mod go.sum tools.go etcd/main.go && go version &&
	echo "${PACKAGES[*]}" "${LDFLAGS}")"
want="$(printf '%s' "${inputs}" | sha256sum | cut -d' ' -f1)"
have="$(cat "${STAMP}" 2>/dev/null || true)"
missing=0
for b in "${BINARIES[@]}"; do [ -x "${BIN}/${b}" ] || missing=1; done
if [ "${want}" = "${have}" ] && [ "${missing}" = 0 ]; then
	echo "upstream binaries are current (${BINARIES[*]})"
	exit 0
fi

start=${SECONDS}
elapsed() { printf '%dm%02ds' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)); }

# progress reads `go build -v` output (one import path per package it compiles) and prints
# a line every PROGRESS_EVERY seconds; anything else (compiler errors, go's messages)
# passes through at once.
progress() {
	local total=$1 compiled=0 last=${SECONDS} line="" partial="" pkg="starting" rc
	while true; do
		if IFS= read -r -t "${PROGRESS_EVERY}" line; then
			line="${partial}${line}"
			partial=""
			if [[ ${line} =~ ^[A-Za-z0-9._~/+-]+$ ]]; then
				compiled=$((compiled + 1))
				pkg=${line}
			else
				printf '%s\n' "${line}"
			fi
		else
			rc=$?
			if [ "${rc}" -le 128 ]; then
				break # end of output
			fi
			partial="${partial}${line}" # timed out, possibly mid-line
		fi
		if [ $((SECONDS - last)) -ge "${PROGRESS_EVERY}" ]; then
			last=${SECONDS}
			if [ "${compiled}" -ge "${total}" ]; then
				printf '  [%s] compiled %d packages; linking the binaries\n' "$(elapsed)" "${compiled}"
			else
				printf '  [%s] compiled %d of %d packages (%d%%), last: %s\n' "$(elapsed)" \
					"${compiled}" "${total}" $((compiled * 100 / total)) "${pkg}"
			fi
		fi
	done
	printf '  [%s] go build ended, having compiled %d of the %d packages involved (the others were cached)\n' \
		"$(elapsed)" "${compiled}" "${total}"
}

echo "building upstream Kubernetes ${KUBE_VERSION} and etcd into _output/bin: ${BINARIES[*]}"
echo "(the first build takes 7-10 minutes on 2 idle cores, downloads included, and longer while other builds run; later builds reuse Go's cache)"
mkdir -p "${BIN}"
cd "${ROOT}/hack/tools"
echo "  [$(elapsed)] listing the packages involved (the first run downloads the modules)"
total="$(go list -deps "${PACKAGES[@]}" | wc -l)"
echo "  [$(elapsed)] compiling up to ${total} packages, then linking ${#BINARIES[@]} binaries"
go build -v -trimpath -ldflags="${LDFLAGS}" -o "${BIN}/" "${PACKAGES[@]}" 2>&1 | progress "${total}"
echo "${want}" >"${STAMP}"
echo "upstream binaries built in $((SECONDS - start))s"
