package node

import (
	"path/filepath"
	"time"
)

// StopContainers stops every container process a node left running under root (its shims
// outlive the node process, so that a restarted node adopts them): SIGTERM to each process
// group, SIGKILL to those still alive after grace. vireo-local down calls it after stopping
// the node, so no process of the node is left.
func StopContainers(root string, grace time.Duration) error {
	return stopPodContainers(filepath.Join(root, "pods", "*"), grace)
}

// stopPodContainers stops the container processes of the Pod directories podDirs matches.
func stopPodContainers(podDirs string, grace time.Duration) error {
	dirs, err := filepath.Glob(filepath.Join(podDirs, "containers", "*", "*"))
	if err != nil {
		return err
	}
	stopContainers(dirs, grace)
	return nil
}
