// Package container runs one container of a Pod as a host process for the vireo-local node, so that
// containers outlive a restart of the node process the way they outlive a kubelet's under conmon.
//
// Each container has a directory DIR (created 0700 by the caller) and a detached shim,
// `vireo-local-shim node-shim DIR`, in its own session. The shim starts the container process as
// `vireo-local-shim node-init DIR/spec.json` in new mount and UTS namespaces and its own process group,
// writes its stdout and stderr to a CRI-format log file, and records the container's life in
// DIR/state.json (pid and /proc start ticks, written once the container's binary has been exec'd)
// and DIR/exit.json (written once it has exited and its output is drained). node-init, running as
// the container's pid, enters the Pod's network namespace, bind-mounts the volumes, sets the
// hostname and credentials and execs the container's binary. When that process exits, the shim
// kills the rest of its process group, as the end of a container's pid namespace would.
//
// The node process only reads these files and signals the recorded pid after checking its start
// ticks (so a recycled pid is never signalled): Start, Inspect, Signal, Wait, Exec and ReadLog are
// all it needs, and all of them work on a container started by an earlier node process.
//
// Files: types.go (the API's types and the files under DIR), start.go (Start and the host-side mount
// targets), shim.go (ShimMain and the CRI log writer), init.go (InitMain), inspect.go (Inspect,
// Signal, Wait), exec.go (Exec) and logs.go (ReadLog).
package container
