//go:build tools

// Package tools pins containerd, the container runtime of vireo-local's nodes (the daemon, its
// runc shim and ctr); hack/build-upstream.sh builds them into _output/bin. It is a module of its
// own so that containerd's dependencies never move Kubernetes' (or the reverse).
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
