package virt

import (
	"context"
	"os"
	"os/user"
	"strings"
	"syscall"
	"testing"
)

func TestLayoutPaths(t *testing.T) {
	l := NewLayout("/var/run/vireo-private/")
	want := map[string]string{
		l.Socket:                   "/var/run/vireo-private/run/libvirt/libvirt-sock",
		l.AdminSocket:              "/var/run/vireo-private/run/libvirt/libvirt-admin-sock",
		l.LibvirtdConf():           "/var/run/vireo-private/config/libvirt/libvirtd.conf",
		l.QEMUConf():               "/var/run/vireo-private/config/libvirt/qemu.conf",
		l.QEMUPidFile("vm"):        "/var/run/vireo-private/run/libvirt/qemu/run/vm.pid",
		l.QEMULogFile("vm"):        "/var/run/vireo-private/cache/libvirt/qemu/log/vm.log",
		l.monitorSocketWorstCase(): "/var/run/vireo-private/config/libvirt/qemu/lib/domain-99999-xxxxxxxxxxxxxxxxxxxx/monitor.sock",
	}
	for got, w := range want {
		if got != w {
			t.Errorf("got %q, want %q", got, w)
		}
	}
	if err := l.check(); err != nil {
		t.Errorf("check of the production directory: %v", err)
	}
	env := strings.Join(l.env(), "\n")
	for _, v := range []string{"XDG_RUNTIME_DIR=/var/run/vireo-private/run", "XDG_CONFIG_HOME=/var/run/vireo-private/config",
		"XDG_CACHE_HOME=/var/run/vireo-private/cache", "XDG_DATA_HOME=/var/run/vireo-private/data", "HOME=/var/run/vireo-private/home"} {
		if !strings.Contains(env, v) {
			t.Errorf("env lacks %s", v)
		}
	}
}

func TestLayoutRejectsLongOrRelativeDirs(t *testing.T) {
	long := "/" + strings.Repeat("d", 60)
	err := NewLayout(long).check()
	if err == nil || !strings.Contains(err.Error(), long) || !strings.Contains(err.Error(), "monitor.sock") {
		t.Errorf("check(%d-byte dir) = %v; want an error naming the directory and the monitor socket", len(long), err)
	}
	longer := "/" + strings.Repeat("d", 90)
	if err := NewLayout(longer).check(); err == nil || !strings.Contains(err.Error(), "libvirt-sock") {
		t.Errorf("check(%d-byte dir) = %v; want an error naming libvirt-sock", len(longer), err)
	}
	if err := NewLayout("relative/dir").check(); err == nil {
		t.Error("check accepted a relative directory")
	}
}

func TestCheckSocketPath(t *testing.T) {
	if err := CheckSocketPath("/" + strings.Repeat("s", MaxSocketPath-1)); err != nil {
		t.Errorf("a %d-byte path: %v", MaxSocketPath, err)
	}
	p := "/" + strings.Repeat("s", MaxSocketPath)
	if err := CheckSocketPath(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("a %d-byte path: %v, want an error naming it", len(p), err)
	}
}

func TestCheckDomainName(t *testing.T) {
	for _, n := range []string{"", ".", "..", "a/b", "../x", "a\x00b"} {
		if checkDomainName(n) == nil {
			t.Errorf("checkDomainName(%q) accepted", n)
		}
	}
	if err := checkDomainName("default_vmi-1.x"); err != nil {
		t.Errorf("checkDomainName rejected a valid name: %v", err)
	}
	if _, err := NewLayout("/x").QEMUPid("../../etc/passwd"); err == nil {
		t.Error("QEMUPid accepted a path as a domain name")
	}
}

func TestStartDaemonRejectsBadConfig(t *testing.T) {
	ctx := context.Background()
	dir := newDaemonDir(t) // short enough for the socket checks; never created here
	bad := []struct {
		name string
		cfg  DaemonConfig
		want string
	}{
		{"no dir", DaemonConfig{}, "Dir is empty"},
		{"missing binary", DaemonConfig{Dir: dir, Binary: "/nonexistent/libvirtd"}, "libvirtd binary"},
		{"bad host uuid", DaemonConfig{Dir: dir, Binary: "/bin/true", HostUUID: "not-a-uuid"}, "HostUUID"},
		{"long dir", DaemonConfig{Dir: "/" + strings.Repeat("d", 80), Binary: "/bin/true"}, "shorter"},
		{"root", DaemonConfig{Dir: dir, Binary: "/bin/true", Credential: &syscall.Credential{Uid: 0, Gid: 0}}, "root"},
	}
	if _, err := user.LookupId("54321"); err != nil {
		bad = append(bad, struct {
			name string
			cfg  DaemonConfig
			want string
		}{"user without passwd entry", DaemonConfig{Dir: dir, Binary: "/bin/true", Credential: &syscall.Credential{Uid: 54321, Gid: 54321}}, "passwd entry"})
	}
	if os.Geteuid() == 0 {
		bad = append(bad, struct {
			name string
			cfg  DaemonConfig
			want string
		}{"root without credential", DaemonConfig{Dir: dir, Binary: "/bin/true"}, "root"})
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			d, err := StartDaemon(ctx, tc.cfg)
			if err == nil {
				_ = d.Stop(ctx)
				t.Fatal("StartDaemon succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestConfigFiles(t *testing.T) {
	conf := libvirtdConf("0f6d2d36-7c1f-4b6e-9d1e-2a4a8c3b5e01")
	for _, want := range []string{`host_uuid = "0f6d2d36-7c1f-4b6e-9d1e-2a4a8c3b5e01"`, `unix_sock_rw_perms = "0700"`,
		"listen_tcp = 0", `log_outputs = "3:stderr"`} {
		if !strings.Contains(conf, want) {
			t.Errorf("libvirtd.conf lacks %s:\n%s", want, conf)
		}
	}
	if !strings.Contains(qemuConf(), `stdio_handler = "file"`) {
		t.Errorf("qemu.conf lacks stdio_handler:\n%s", qemuConf())
	}
}
