package virt

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/vireo-dev/vireo/launcher/protocol/capsseed"
)

// seedCapabilities copies the node's capabilities seed into the daemon's cache, creating the
// cache's directories for the daemon's user. The copies are the daemon's own: libvirt
// rewrites a file it finds stale.
func seedCapabilities(l Layout, seed string, cred *syscall.Credential) error {
	if seed == "" {
		return nil
	}
	var owner *capsseed.Owner
	if cred != nil {
		owner = &capsseed.Owner{UID: int(cred.Uid), GID: int(cred.Gid)}
	}
	// CapabilitiesDir's parents below the cache directory, created for the daemon's user.
	parent := l.CacheDir
	for _, part := range []string{"libvirt", "qemu", "cache"} {
		parent = filepath.Join(parent, part)
		if err := os.Mkdir(parent, 0o700); err != nil && !os.IsExist(err) {
			return fmt.Errorf("virt: create %s: %w", parent, err)
		}
		if err := chown(parent, cred); err != nil {
			return err
		}
	}
	dst := l.CapabilitiesDir()
	if filepath.Dir(dst) != parent {
		return fmt.Errorf("virt: capabilities cache %s is not below %s", dst, parent)
	}
	if _, err := capsseed.Copy(seed, dst, 0o600, owner); err != nil {
		return fmt.Errorf("virt: %w", err)
	}
	return nil
}

// ExportCapabilities copies the daemon's capabilities cache into dir, readable by all, for
// other launchers of this node to start from (package capsseed). It returns how many files
// it copied: none before the first probe.
func (d *Daemon) ExportCapabilities(dir string) (int, error) {
	return capsseed.Copy(d.layout.CapabilitiesDir(), dir, 0o644, nil)
}
