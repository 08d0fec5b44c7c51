// Package launcher is vireo-launcher, the process in each VMI's launcher Pod. It runs as uid
// 107 with no Kubernetes credentials: it waits for the directory its node agent gives its Pod,
// serves the launcher protocol on a unix socket there while its own session-mode libvirtd
// starts, and when the node agent hands it the VMI, prepares the disks, builds the domain and
// starts it. It reports the domain's life as events and exits when the domain ends (code 0 when the
// guest ended normally), after the node agent heard how. SIGTERM (its Pod being deleted) shuts
// the guest down through ACPI and destroys it after the VMI's grace period.
package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// Options are vireo-launcher's command-line options; the Pod's environment gives PodUID and PodIP.
type Options struct {
	Namespace, Name, UID string
	PodUID, PodIP        string
	// Dir is the launcher's own directory, its Pod's emptyDir (protocol.LauncherDir).
	Dir        string
	PrivateDir string
	// CapabilitiesSeed is the node's seed of libvirt's QEMU capabilities (package capsseed),
	// which the node agent copies into the launcher's directory; default
	// Dir/protocol.CapabilitiesSeed. SeedTimeout bounds the wait for it before libvirtd starts
	// (without it, libvirtd probes QEMU itself: 2-3 s).
	CapabilitiesSeed string
	SeedTimeout      time.Duration
	// TCGCacheMiB bounds QEMU's translation cache under TCG (smaller RSS; docs/design.md section 9).
	TCGCacheMiB uint
	// VCPUNice is the niceness of the guest's vCPU threads (0: unchanged).
	VCPUNice int
	// FinalTimeout bounds the wait for the node agent to receive the final status before exiting.
	FinalTimeout time.Duration
	// UseEmulation allows the guest to run under software emulation when the node has no usable
	// KVM (the cluster's useEmulation, passed by vireo-controller); UseEmulationSource names
	// where that setting comes from and NodeName the node, for the refusal when it does not.
	UseEmulation       bool
	UseEmulationSource string
	NodeName           string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{Dir: protocol.LauncherDir, PrivateDir: protocol.PrivateDir, TCGCacheMiB: 16, VCPUNice: 10,
		SeedTimeout: 3 * time.Second, FinalTimeout: 10 * time.Second,
		PodUID: os.Getenv("POD_UID"), PodIP: os.Getenv("POD_IP"),
		UseEmulation: true, NodeName: os.Getenv("NODE_NAME")}
}

// AddFlags registers the options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Namespace of the VMI this launcher runs.")
	fs.StringVar(&o.Name, "name", o.Name, "Name of the VMI.")
	fs.StringVar(&o.UID, "uid", o.UID, "UID of the VMI; the launcher refuses any other.")
	fs.StringVar(&o.PodUID, "pod-uid", o.PodUID, "UID of the launcher's Pod (names its directory); default $POD_UID.")
	fs.StringVar(&o.PodIP, "pod-ip", o.PodIP, "The Pod's address, reported as the guest's; default $POD_IP.")
	fs.StringVar(&o.Dir, "dir", o.Dir, "The launcher's own directory (its Pod's emptyDir), shared with the node agent.")
	fs.StringVar(&o.PrivateDir, "private-dir", o.PrivateDir, "The Pod's private directory (libvirt's state, disk overlays).")
	fs.StringVar(&o.CapabilitiesSeed, "capabilities-seed-dir", o.CapabilitiesSeed, "The node's QEMU capabilities probed by libvirt, which the node agent copies in, copied into libvirtd's cache so it need not probe again; default DIR/"+protocol.CapabilitiesSeed+".")
	fs.DurationVar(&o.SeedTimeout, "capabilities-seed-timeout", o.SeedTimeout, "How long to wait for the capabilities seed before libvirtd starts without it.")
	fs.IntVar(&o.VCPUNice, "vcpu-nice", o.VCPUNice, "Niceness of the guest's vCPU threads, below the launcher, libvirtd and QEMU's device emulation (0: unchanged).")
	fs.UintVar(&o.TCGCacheMiB, "tcg-cache-mib", o.TCGCacheMiB, "QEMU TCG translation cache size in MiB (0: QEMU's default).")
	fs.BoolVar(&o.UseEmulation, "use-emulation", o.UseEmulation, "Whether the guest may run under software emulation (QEMU TCG) when this node has no usable KVM: the cluster's spec.configuration.developerConfiguration.useEmulation, which vireo-controller passes. Without the flag it may, as before the setting existed.")
	fs.StringVar(&o.UseEmulationSource, "use-emulation-source", o.UseEmulationSource, "Where --use-emulation comes from (such as \"KubeVirt vireo-system/kubevirt\"), named when the guest is refused.")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "The node this launcher runs on, named when the guest is refused; default $NODE_NAME.")
}

// Run runs the launcher until its domain ends; the exit code says how (0: ended normally).
// sigterm delivers the Pod's termination.
func Run(ctx context.Context, o *Options, sigterm <-chan os.Signal, logs io.Writer) (int, error) {
	if o.Namespace == "" || o.Name == "" || o.UID == "" || o.PodUID == "" {
		return 2, errors.New("--namespace, --name, --uid and --pod-uid (or $POD_UID) are required")
	}
	// QEMU, daemonized by libvirtd, comes to the launcher when orphaned: libvirtd waits for it
	// to be gone (reaped) whenever it stops it (a migration's end, a shutdown).
	if err := virt.ReapOrphans(ctx, virt.OtherSession); err != nil {
		klog.ErrorS(err, "Cannot adopt QEMU: stopping a guest waits for the node's init to reap it")
	}
	dir, err := launcherDir(o.Dir)
	if err != nil {
		return 2, err
	}
	if o.CapabilitiesSeed == "" {
		o.CapabilitiesSeed = filepath.Join(dir, protocol.CapabilitiesSeed)
	}
	for _, name := range []string{protocol.CommandSocket, protocol.ConsoleSocket, protocol.VNCSocket, protocol.NetworkSocket} {
		_ = os.Remove(filepath.Join(dir, name))
	}
	l := newLauncher(o, dir)
	go l.startLibvirt(ctx, logs)
	listener, err := net.Listen("unix", filepath.Join(dir, protocol.CommandSocket))
	if err != nil {
		return 2, err
	}
	srv := protocol.NewServer(l)
	go func() { _ = srv.Serve(listener) }()
	go func() {
		if err := serveNetworkHandover(ctx, dir); err != nil {
			klog.ErrorS(err, "Cannot serve the network handover: the guest's network cannot be set up")
		}
	}()
	if err := l.awaitLibvirt(ctx); err != nil {
		srv.Stop()
		return 2, err
	}
	defer stopDaemon(l.daemon)
	defer l.conn.Close()
	klog.InfoS("vireo-launcher ready", "vmi", o.Namespace+"/"+o.Name, "dir", dir, "emulation", l.emulation)
	code := l.loop(ctx, l.daemon, l.lv.events, sigterm)
	stopGracefully(srv, 5*time.Second)
	return code, nil
}

// stopGracefully lets running calls end (an event stream ends after the final status, which
// flushes it to the node agent) before the launcher exits; after timeout it stops hard.
func stopGracefully(srv interface {
	GracefulStop()
	Stop()
}, timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		srv.Stop()
	}
}

// loop follows the domain, libvirtd and the Pod's termination until the domain ends.
func (l *launcher) loop(ctx context.Context, daemon *virt.Daemon, events <-chan virt.Event, sigterm <-chan os.Signal) int {
	var graceOver <-chan time.Time
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if !l.ownDomain(ev) {
				klog.InfoS("Ignoring the event of a domain that is not this VMI's", "event", ev.String(), "want", l.wantDomain())
				continue
			}
			klog.InfoS("Domain event", "event", ev.String())
			l.events.handle(ev)
			if ev.Kind == virt.EventResumed && ev.Reason == virt.ReasonMigrated {
				go l.arrived(ctx, ev.Domain)
			}
			if ev.Kind == virt.EventAgentConnected {
				l.agentConnected(ctx, ev.Domain)
			}
		case <-daemon.Done():
			l.hub.end(protocol.DomainFailed, v1.ReasonLibvirtExited, fmt.Sprintf("libvirtd exited: %v", daemon.Err()))
		case <-sigterm:
			sigterm = nil
			graceOver = l.terminate(ctx)
		case <-graceOver:
			graceOver = nil
			l.destroy(ctx)
		case <-l.hub.final:
			return l.finish()
		case <-ctx.Done():
			return 1
		}
	}
}

// wantDomain is the name of the VMI's domain (domain.DomainName), on the source and on a
// migration's target alike.
func (l *launcher) wantDomain() string {
	return domain.DomainName(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: l.opts.Namespace, Name: l.opts.Name}})
}

// ownDomain reports whether ev concerns the VMI's domain. Another domain in the launcher's
// libvirtd (someone with root on the node and virsh) must not end or pause the VMI.
func (l *launcher) ownDomain(ev virt.Event) bool {
	return ev.Domain == l.wantDomain()
}

// finish waits (briefly) until a connected node agent has the final status, then returns the
// exit code. Without one it exits at once: the Pod's status tells the node agent how it ended.
func (l *launcher) finish() int {
	st := l.hub.get()
	klog.InfoS("Domain ended", "phase", st.Phase, "reason", st.Reason, "message", st.Message)
	if l.hub.subscribed() {
		select {
		case <-l.hub.delivered:
		case <-time.After(l.opts.FinalTimeout):
			klog.InfoS("The node agent did not take the final status; exiting anyway")
		}
	}
	fmt.Fprintf(os.Stderr, "%s: %s\n", st.Reason, st.Message)
	if st.Phase == protocol.DomainSucceeded {
		return 0
	}
	return 1
}

// launcherDir checks the launcher's own directory, its Pod's emptyDir, which it shares with
// the node agent: a directory this user may write to.
func launcherDir(dir string) (string, error) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the launcher's directory %s is not a directory (%v): the launcher Pod mounts its emptyDir there", dir, err)
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return "", fmt.Errorf("the launcher's directory %s is not writable by uid %d: %w", dir, os.Getuid(), err)
	}
	return dir, nil
}

func stopDaemon(d *virt.Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		klog.ErrorS(err, "Stopping libvirtd")
	}
}
