//go:build tools

// Package tools pins runc, the OCI runtime containerd starts containers with on vireo-local's
// nodes; hack/build-upstream.sh builds it with cgo and the seccomp tag (against Debian's
// libseccomp-dev), without which RuntimeDefault Pods fail. A module of its own, like containerd's.
package tools

import _ "github.com/opencontainers/runc"
