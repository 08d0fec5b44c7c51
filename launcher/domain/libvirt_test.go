package domain

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// launcherUID is the user the launcher runs libvirtd and QEMU as.
const launcherUID = 107

// sessionDaemon is a throwaway session-mode libvirtd, run as the launcher's user when the test
// runs as root, with its own XDG and HOME directories.
type sessionDaemon struct {
	dir  string
	sock string
	cred *syscall.Credential
}

// The session daemon is started once for the package's tests and stopped by TestMain.
var (
	daemonOnce sync.Once
	daemon     *sessionDaemon
	daemonErr  error
	daemonStop = func() {}
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	daemonStop()
	os.Exit(code)
}

// sharedDaemon returns the package's session libvirtd, starting it on first use; it skips the
// test under -short or where libvirt is not installed.
func sharedDaemon(t *testing.T) *sessionDaemon {
	t.Helper()
	if testing.Short() {
		t.Skip("starts libvirtd; skipped with -short")
	}
	for _, tool := range []string{"libvirtd", "virsh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (hack/install-deps.sh installs libvirt)", tool)
		}
	}
	daemonOnce.Do(func() { daemon, daemonErr = startSessionDaemon() })
	if daemonErr != nil {
		t.Fatal(daemonErr)
	}
	return daemon
}

// startSessionDaemon starts a session libvirtd and sets daemonStop to stop it.
func startSessionDaemon() (*sessionDaemon, error) {
	// Not t.TempDir: its parent is private to root, and the daemon runs as another user.
	dir, err := os.MkdirTemp("", "vireo-libvirt-")
	if err != nil {
		return nil, err
	}
	daemonStop = func() { os.RemoveAll(dir) }
	d := &sessionDaemon{dir: dir, sock: filepath.Join(dir, "rt", "libvirt", "libvirt-sock")}
	for _, sub := range []string{"rt", "config/libvirt", "cache", "data", "home"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	// QEMU's output goes to a file instead of virtlogd, which a session daemon would have to start.
	if err := os.WriteFile(filepath.Join(dir, "config/libvirt/qemu.conf"), []byte("stdio_handler = \"file\"\n"), 0o600); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		d.cred = &syscall.Credential{Uid: launcherUID, Gid: launcherUID}
		if err := chownTree(dir, launcherUID); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command("libvirtd")
	cmd.Env = d.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: d.cred, Setpgid: true}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting libvirtd: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	daemonStop = func() {
		_ = cmd.Process.Kill()
		<-exited
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(d.sock); err == nil {
			if _, err := d.virsh("version"); err == nil {
				return d, nil
			}
		}
		select {
		case err := <-exited:
			exited <- err
			return nil, fmt.Errorf("libvirtd exited before its socket appeared: %v\n%s", err, log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("libvirtd's socket %s did not appear within 30s\n%s", d.sock, log.String())
		}
	}
}

// env is the daemon's environment: XDG and HOME directories of its own.
func (d *sessionDaemon) env() []string {
	return []string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"XDG_RUNTIME_DIR=" + filepath.Join(d.dir, "rt"),
		"XDG_CONFIG_HOME=" + filepath.Join(d.dir, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(d.dir, "cache"),
		"XDG_DATA_HOME=" + filepath.Join(d.dir, "data"),
		"HOME=" + filepath.Join(d.dir, "home"),
	}
}

// virsh runs virsh against the daemon, with a deadline.
func (d *sessionDaemon) virsh(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	uri := "qemu:///session?socket=" + d.sock
	out, err := exec.CommandContext(ctx, "virsh", append([]string{"-q", "-c", uri}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("virsh %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// chownTree gives dir and everything below it to uid.
func chownTree(dir string, uid int) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
}

// writeFile writes data to a file in the daemon's directory and returns its path.
func (d *sessionDaemon) writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(d.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if d.cred != nil {
		if err := os.Chown(p, launcherUID, launcherUID); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestSchema checks every golden domain against libvirt's RelaxNG schema.
func TestSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("runs virt-xml-validate; skipped with -short")
	}
	if _, err := exec.LookPath("virt-xml-validate"); err != nil {
		t.Skip("virt-xml-validate is not installed (hack/install-deps.sh installs libvirt-clients)")
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("xmllint, which virt-xml-validate runs, is not installed (hack/install-deps.sh installs libxml2-utils)")
	}
	for _, c := range goldenCases(t) {
		out, err := exec.Command("virt-xml-validate", filepath.Join("testdata", c.name+".xml"), "domain").CombinedOutput()
		if err != nil {
			t.Errorf("%s.xml does not validate: %v\n%s", c.name, err, out)
		}
	}
}

// TestDefineInSessionLibvirt defines and undefines every golden domain in a session libvirtd
// like the launcher's, and checks what libvirt kept. KVM domains are defined as TCG domains
// where this host's libvirt cannot define KVM domains (no usable /dev/kvm).
func TestDefineInSessionLibvirt(t *testing.T) {
	d := sharedDaemon(t)
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			xml := buildXML(t, c)
			file := d.writeFile(t, c.name+".xml", []byte(xml))
			_, err := d.virsh("define", file)
			if err != nil && c.in.Emulation == EmulationKVM && strings.Contains(err.Error(), "does not support virt type 'kvm'") {
				t.Logf("no KVM here; defining the domain as TCG instead")
				c.in.Emulation = EmulationTCG
				file = d.writeFile(t, c.name+".xml", []byte(buildXML(t, c)))
				_, err = d.virsh("define", file)
			}
			if err != nil {
				t.Fatal(err)
			}
			name := DomainName(loadVMI(t, c.name))
			defined, err := d.virsh("dumpxml", "--inactive", name)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"machine='pc-q35-", "<qemu:commandline>"} {
				hasNetwork := strings.Contains(xml, "<commandline")
				if want == "<qemu:commandline>" && !hasNetwork {
					continue
				}
				if !strings.Contains(defined, want) {
					t.Errorf("libvirt's definition of %s lacks %q:\n%s", name, want, defined)
				}
			}
			if _, err := d.virsh("undefine", name); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestStartPausedInSessionLibvirt starts golden domains paused, on real image files, which
// runs QEMU with every argument (so QEMU itself checks the NIC on its tap device, the
// serial BIOS, the buses and controllers), then destroys them. KVM cases run as TCG.
func TestStartPausedInSessionLibvirt(t *testing.T) {
	d := sharedDaemon(t)
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skip("qemu-img is not installed (hack/install-deps.sh installs qemu-utils)")
	}
	for _, c := range goldenCases(t) {
		if c.name != "tiny" && c.name != "devices" && c.name != "storage" && c.name != "kernelboot" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			vmi := loadVMI(t, c.name)
			in := c.in
			if len(vmi.Spec.Domain.Devices.Interfaces) > 0 {
				in.TapDevice = d.tap(t)
			}
			in.Emulation, in.TCGCacheMiB = EmulationTCG, 8
			in.ConsoleSocket, in.VNCSocket = filepath.Join(d.dir, c.name+"-console.sock"), filepath.Join(d.dir, c.name+"-vnc.sock")
			in.AgentSocket = filepath.Join(d.dir, c.name+"-agent.sock")
			if c.in.KernelBoot != nil {
				in.KernelBoot = d.guestKernel(t)
			}
			in.Disks = map[string]DiskSource{}
			for name, src := range c.in.Disks {
				src.Path, src.Block = d.image(t, c.name+"-"+name, src.Format), false
				src.DirectIO = directIO(src.Path)
				in.Disks[name] = src
			}
			dom, err := Build(vmi, in)
			if err != nil {
				t.Fatal(err)
			}
			xml, err := Marshal(dom)
			if err != nil {
				t.Fatal(err)
			}
			file := d.writeFile(t, c.name+"-start.xml", []byte(xml))
			if _, err := d.virsh("create", "--paused", file); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if _, err := d.virsh("destroy", DomainName(vmi)); err != nil {
					t.Error(err)
				}
			}()
			state, err := d.virsh("domstate", DomainName(vmi))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(state, "paused") {
				t.Errorf("domain state %q, want paused", state)
			}
			if _, err := os.Stat(in.ConsoleSocket); err != nil {
				t.Errorf("QEMU did not bind the console socket: %v", err)
			}
		})
	}
}

// tap creates a tap device for the daemon's user, as the node's network helper does in a Pod,
// and removes it when the test ends.
func (d *sessionDaemon) tap(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating a tap device for the guest's NIC needs root")
	}
	// libvirt opens /dev/net/tun as the daemon's user to attach to the device. Distributions'
	// udev rules make it 0666; a machine without udev may have left it 0600.
	if st, err := os.Stat("/dev/net/tun"); err == nil && st.Mode().Perm() != 0o666 {
		if err := os.Chmod("/dev/net/tun", 0o666); err != nil {
			t.Fatal(err)
		}
		t.Logf("/dev/net/tun was %v; made it 0666 as udev does", st.Mode().Perm())
	}
	name := fmt.Sprintf("vdt%d", os.Getpid()%100000)
	out, err := exec.Command("ip", "tuntap", "add", "dev", name, "mode", "tap", "vnet_hdr",
		"user", fmt.Sprint(launcherUID), "group", fmt.Sprint(launcherUID)).CombinedOutput()
	if err != nil {
		t.Fatalf("ip tuntap add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name).Run() })
	return name
}

// guestKernel copies the test guest's kernel and initramfs (test/images, `make images`) into
// the daemon's directory, readable by its user; it skips the test when they are not built.
func (d *sessionDaemon) guestKernel(t *testing.T) *KernelBootFiles {
	t.Helper()
	files := &KernelBootFiles{Kernel: filepath.Join(d.dir, "vmlinuz"), Initrd: filepath.Join(d.dir, "initrd.img")}
	for src, dst := range map[string]string{"vmlinuz": files.Kernel, "initrd.img": files.Initrd} {
		data, err := os.ReadFile(filepath.Join("..", "..", "_output", "images", "tiny", src))
		if err != nil {
			t.Skipf("the test guest is not built (make images): %v", err)
		}
		if err := os.WriteFile(dst, data, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// image creates a 16 MiB image of format in the daemon's directory, owned by its user.
func (d *sessionDaemon) image(t *testing.T, name, format string) string {
	t.Helper()
	p := filepath.Join(d.dir, name+"."+format)
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", format, p, "16M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v: %s", err, out)
	}
	if d.cred != nil {
		if err := os.Chown(p, launcherUID, launcherUID); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// directIO reports whether path can be opened with O_DIRECT.
func directIO(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
