// Package node is the vireo-local node: a virtual-kubelet provider that runs the containers of the
// Pods bound to it as host processes, so that a single machine can run Vireo from its own manifests.
//
// The files images.go, env.go, backoff.go, status.go and reasons.go are its pure parts: the kubelet's contract
// (which binary an image means, a container's environment, restart back-off and the Pod status a
// kubelet would report) computed without touching the machine or the API, so they are table-tested.
package node
