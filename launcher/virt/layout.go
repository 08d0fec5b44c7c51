package virt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxSocketPath is the longest path a unix socket can be bound at on Linux: sun_path holds
// 108 bytes including the terminating NUL.
const MaxSocketPath = 107

// domainShortNameMax is how many bytes of a domain name libvirt keeps in the per-domain
// directory names (VIR_DOMAIN_SHORT_NAME_MAX).
const domainShortNameMax = 20

// Layout is where a session libvirtd and its QEMU processes keep their files, all under one
// private directory so two launchers (a migration source and target on one node) never share
// a path.
type Layout struct {
	// Dir is the private base directory.
	Dir string
	// RuntimeDir, ConfigDir, CacheDir, DataDir and HomeDir are XDG_RUNTIME_DIR,
	// XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_DATA_HOME and HOME of the daemon.
	RuntimeDir, ConfigDir, CacheDir, DataDir, HomeDir string
	// Socket is libvirtd's read-write unix socket.
	Socket string
	// AdminSocket is libvirtd's administration socket.
	AdminSocket string
	// QEMURunDir holds a running domain's pid file and status XML.
	QEMURunDir string
	// QEMULogDir holds one log file per domain: QEMU's stdout and stderr after its command line.
	QEMULogDir string
	// QEMULibDir holds one directory per running domain with its QMP monitor socket.
	QEMULibDir string
}

// NewLayout returns the layout of a session libvirtd whose private directory is dir.
func NewLayout(dir string) Layout {
	dir = filepath.Clean(dir)
	l := Layout{
		Dir:        dir,
		RuntimeDir: filepath.Join(dir, "run"),
		ConfigDir:  filepath.Join(dir, "config"),
		CacheDir:   filepath.Join(dir, "cache"),
		DataDir:    filepath.Join(dir, "data"),
		HomeDir:    filepath.Join(dir, "home"),
	}
	l.Socket = filepath.Join(l.RuntimeDir, "libvirt", "libvirt-sock")
	l.AdminSocket = filepath.Join(l.RuntimeDir, "libvirt", "libvirt-admin-sock")
	l.QEMURunDir = filepath.Join(l.RuntimeDir, "libvirt", "qemu", "run")
	l.QEMULogDir = filepath.Join(l.CacheDir, "libvirt", "qemu", "log")
	l.QEMULibDir = filepath.Join(l.ConfigDir, "libvirt", "qemu", "lib")
	return l
}

// LibvirtdConf is the path of the daemon's libvirtd.conf.
func (l Layout) LibvirtdConf() string { return filepath.Join(l.ConfigDir, "libvirt", "libvirtd.conf") }

// QEMUConf is the path of the daemon's qemu.conf.
func (l Layout) QEMUConf() string { return filepath.Join(l.ConfigDir, "libvirt", "qemu.conf") }

// QEMUPidFile is where libvirt records the pid of the running domain name.
func (l Layout) QEMUPidFile(name string) string { return filepath.Join(l.QEMURunDir, name+".pid") }

// QEMULogFile is the log file of domain name.
func (l Layout) QEMULogFile(name string) string { return filepath.Join(l.QEMULogDir, name+".log") }

// dirs lists the directories StartDaemon creates, parents first.
func (l Layout) dirs() []string {
	return []string{l.Dir, l.RuntimeDir, l.ConfigDir, filepath.Join(l.ConfigDir, "libvirt"),
		l.CacheDir, l.DataDir, l.HomeDir}
}

// env is the daemon's environment: the XDG directories select session mode's paths.
func (l Layout) env() []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	return []string{
		"PATH=" + path,
		"LC_ALL=C",
		"HOME=" + l.HomeDir,
		"XDG_RUNTIME_DIR=" + l.RuntimeDir,
		"XDG_CONFIG_HOME=" + l.ConfigDir,
		"XDG_CACHE_HOME=" + l.CacheDir,
		"XDG_DATA_HOME=" + l.DataDir,
	}
}

// monitorSocketWorstCase is the longest QMP monitor socket path libvirt can create for a
// domain in this layout (domain ids below 100000).
func (l Layout) monitorSocketWorstCase() string {
	return filepath.Join(l.QEMULibDir, "domain-99999-"+strings.Repeat("x", domainShortNameMax), "monitor.sock")
}

// check fails when a socket libvirt or QEMU must bind in this layout would be too long.
func (l Layout) check() error {
	if !filepath.IsAbs(l.Dir) {
		return fmt.Errorf("virt: daemon directory %q is not an absolute path", l.Dir)
	}
	for _, p := range []string{l.Socket, l.AdminSocket} {
		if err := CheckSocketPath(p); err != nil {
			return fmt.Errorf("%w; use a shorter daemon directory than %q", err, l.Dir)
		}
	}
	if m := l.monitorSocketWorstCase(); len(m) > MaxSocketPath {
		return fmt.Errorf("virt: QEMU monitor sockets in %q can be %d bytes long (e.g. %q), more than the %d a unix socket path allows; use a shorter daemon directory",
			l.Dir, len(m), m, MaxSocketPath)
	}
	return nil
}

// CheckSocketPath returns an error naming path when a unix socket cannot be bound there
// because the path is too long. The domain XML builder uses it for serial and VNC sockets.
func CheckSocketPath(path string) error {
	if len(path) > MaxSocketPath {
		return fmt.Errorf("virt: unix socket path %q is %d bytes, more than the %d Linux allows", path, len(path), MaxSocketPath)
	}
	return nil
}

// checkDomainName rejects names that cannot be a libvirt domain name or would escape the
// layout's directories when used in a file name.
func checkDomainName(name string) error {
	switch {
	case name == "":
		return errors.New("virt: empty domain name")
	case strings.ContainsAny(name, "/\x00"), name == ".", name == "..":
		return fmt.Errorf("virt: invalid domain name %q", name)
	}
	return nil
}

// CapabilitiesDir is libvirt's cache of QEMU capabilities: one file per QEMU binary.
func (l Layout) CapabilitiesDir() string {
	return filepath.Join(l.CacheDir, "libvirt", "qemu", "cache", "capabilities")
}
