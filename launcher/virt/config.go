package virt

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// libvirtdConf renders libvirtd.conf for a session daemon. Session libvirtd never listens on
// TCP unless started with --listen (StartDaemon does not pass it); the listen_* lines keep
// that explicit. Warnings and errors go to stderr, which StartDaemon forwards with a
// prefix. (Drivers a launcher does not use log errors at every start in a Pod: no dnsmasq,
// no D-Bus, no udev DMI data, no /dev/kvm. log_filters cannot hide them: a filter sets a
// minimum priority, and errors are the highest.)
func libvirtdConf(hostUUID string) string {
	return strings.Join([]string{
		"# Written by vireo-launcher (launcher/virt); rewritten at every daemon start.",
		fmt.Sprintf("host_uuid = %q", hostUUID),
		`listen_tcp = 0`,
		`listen_tls = 0`,
		`unix_sock_rw_perms = "0700"`,
		`unix_sock_admin_perms = "0700"`,
		`auth_unix_rw = "none"`,
		`log_outputs = "3:stderr"`,
		"",
	}, "\n")
}

// qemuConf renders qemu.conf for a session daemon: QEMU's stdout and stderr go straight to
// the domain's log file instead of through virtlogd, which the launcher does not run.
func qemuConf() string {
	return strings.Join([]string{
		"# Written by vireo-launcher (launcher/virt); rewritten at every daemon start.",
		`stdio_handler = "file"`,
		"",
	}, "\n")
}

// prepareDirs creates the layout's directories and configuration files, owned by cred's user
// when cred is set (the caller is root and the daemon runs as that user).
func prepareDirs(l Layout, hostUUID string, cred *syscall.Credential) error {
	for _, d := range l.dirs() {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("virt: create daemon directory: %w", err)
		}
		if err := chown(d, cred); err != nil {
			return err
		}
	}
	files := map[string]string{l.LibvirtdConf(): libvirtdConf(hostUUID), l.QEMUConf(): qemuConf()}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return fmt.Errorf("virt: write %s: %w", path, err)
		}
		if err := chown(path, cred); err != nil {
			return err
		}
	}
	return nil
}

func chown(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Lchown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("virt: hand %s to uid %d: %w", path, cred.Uid, err)
	}
	return nil
}
