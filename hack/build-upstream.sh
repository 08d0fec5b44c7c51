#!/usr/bin/env bash
# Builds the upstream binaries vireo-local runs into _output/bin, each group from its pinned module
# under hack/tools:
#   kubernetes (hack/tools):            etcd, kube-apiserver, kube-controller-manager, kube-proxy,
#                                       kube-scheduler, kubectl, kubelet
#   containerd (hack/tools/containerd): containerd, containerd-shim-runc-v2, ctr
#   runc (hack/tools/runc):             runc, with cgo and the seccomp tag (Debian's libseccomp-dev)
# A second run with nothing changed does no work: a stamp per group records the inputs of its last
# build (the module files, the sources, the list of binaries and the linker flags). When a stamp is
# off or a binary is missing, go build runs for the group but relinks only what changed: it leaves
# an existing binary whose build ID already matches, so adding a binary compiles and links just that
# one (and the packages it adds) on a warm Go build cache.
# The first build is long, so it reports what it is doing and how far along it is every
# PROGRESS_EVERY seconds (default 15): packages compiled out of the packages involved.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
BIN="${ROOT}/_output/bin"
TOOLS="${ROOT}/hack/tools"
PROGRESS_EVERY="${PROGRESS_EVERY:-15}"

# module_version prints the version a tools module requires of a module.
module_version() {
	awk -v m="$2" '$1 == m { print $2 } $1 == "require" && $2 == m { print $3 }' "$1/go.mod"
}

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

# build_group NAME MODULE_DIR "BINARIES" "PACKAGES" "LDFLAGS" "TAGS" builds one group of binaries
# unless its stamp says they are current. CGO_ENABLED is 1 only when TAGS ask for cgo (runc).
build_group() {
	local name=$1 dir=$2 binaries=($3) packages=($4) ldflags=$5 tags=$6
	local stamp="${BIN}/.upstream-stamp-${name}" inputs want have missing=0 total cgo=0
	[ -n "${tags}" ] && cgo=1
	inputs="$(cd "${dir}" && cat go.mod go.sum && find . -name '*.go' -not -path './containerd/*' \
		-not -path './runc/*' | sort | xargs cat && go version && echo "${packages[*]} ${ldflags} ${tags}")"
	want="$(printf '%s' "${inputs}" | sha256sum | cut -d' ' -f1)"
	have="$(cat "${stamp}" 2>/dev/null || true)"
	for b in "${binaries[@]}"; do [ -x "${BIN}/${b}" ] || missing=1; done
	if [ "${want}" = "${have}" ] && [ "${missing}" = 0 ]; then
		echo "upstream ${name} binaries are current (${binaries[*]})"
		return
	fi
	echo "building upstream ${name} into _output/bin: ${binaries[*]}"
	cd "${dir}"
	echo "  [$(elapsed)] listing the packages involved (the first run downloads the modules)"
	total="$(CGO_ENABLED=${cgo} go list -tags "${tags}" -deps "${packages[@]}" | wc -l)"
	echo "  [$(elapsed)] compiling up to ${total} packages, then linking ${#binaries[@]} binaries"
	CGO_ENABLED=${cgo} go build -v -trimpath -tags "${tags}" -ldflags="${ldflags}" -o "${BIN}/" \
		"${packages[@]}" 2>&1 | progress "${total}"
	echo "${want}" >"${stamp}"
}

# The version the Kubernetes binaries report (--version, /version, the kubelet's node status,
# client user agents), set as the release build does: without it they say v0.0.0-master.
KUBE_VERSION="$(module_version "${TOOLS}" k8s.io/kubernetes)"
if [[ ! ${KUBE_VERSION} =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
	echo "hack/tools/go.mod must require k8s.io/kubernetes at a release (vX.Y.Z), not '${KUBE_VERSION}'" >&2
	exit 1
fi
KUBE_LDFLAGS=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	KUBE_LDFLAGS+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=${BASH_REMATCH[1]}"
	KUBE_LDFLAGS+=" -X ${pkg}.gitMinor=${BASH_REMATCH[2]} -X ${pkg}.gitTreeState=clean"
done
CONTAINERD_VERSION="$(module_version "${TOOLS}/containerd" github.com/containerd/containerd/v2)"
RUNC_VERSION="$(module_version "${TOOLS}/runc" github.com/opencontainers/runc)"

echo "(the first build of all groups takes 10-15 minutes on 2 idle cores, downloads included, and longer while other builds run; later builds reuse Go's cache)"
mkdir -p "${BIN}"
rm -f "${BIN}/.upstream-stamp" # the single stamp of builds before the groups
build_group kubernetes "${TOOLS}" "etcd kube-apiserver kube-controller-manager kube-proxy kube-scheduler kubectl kubelet" \
	"./etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet" \
	"${KUBE_LDFLAGS}" ""
build_group containerd "${TOOLS}/containerd" "containerd containerd-shim-runc-v2 ctr" \
	"github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/ctr" \
	"-X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION} -X github.com/containerd/containerd/v2/version.Revision=${CONTAINERD_VERSION}" ""
build_group runc "${TOOLS}/runc" "runc" "github.com/opencontainers/runc" \
	"-X main.version=${RUNC_VERSION#v} -X main.gitCommit=${RUNC_VERSION}" "seccomp"
echo "upstream binaries ready in $((SECONDS - start))s"
