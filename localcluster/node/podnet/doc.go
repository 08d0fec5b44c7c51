// Package podnet gives each Pod of a vireo-local node its own network namespace and an address
// from the node's Pod CIDR, through the standard CNI plugins (bridge, host-local, loopback) driven
// by libcni, as a kubelet's container runtime would.
//
// The node process runs inside the node's network namespace (entered with nsenter --net, so it
// shares the host's mount namespace); the plugins it executes inherit that namespace, so the
// Pods' bridge and their gateway address live there, never on the machine's own interfaces.
// Everything the package knows is on disk: the Pod namespaces under /run/netns (named after the
// node and the Pod's UID) and libcni's cache and host-local's allocations under Config.StateDir,
// so a restarted node adopts the Pods it had and can tear down those it no longer has.
package podnet
