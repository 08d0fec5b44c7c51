package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/launcher/virt"
)

// The launcher serves its node agent while its libvirtd starts: the agent connects and hands
// the VMI over, and the disks are prepared, meanwhile (about 0.1 s off every start and every
// migration's target). Whatever needs libvirt waits for it with awaitLibvirt; everything that
// acts on a domain runs after one was started, so after libvirt was ready.

// libvirtStart is the start of the launcher's libvirtd: closed ready, then the domain event
// stream (subscribed before any domain starts) or why it did not start.
type libvirtStart struct {
	ready  chan struct{}
	events <-chan virt.Event
	err    error
}

// startLibvirt starts libvirtd, connects and subscribes to its events, then marks l's libvirt
// ready (or failed). A daemon that started but cannot be used is stopped again.
func (l *launcher) startLibvirt(ctx context.Context, logs io.Writer) {
	s := l.lv
	defer close(s.ready)
	if !waitForSeed(ctx, l.opts.CapabilitiesSeed, l.opts.SeedTimeout) {
		klog.InfoS("No capabilities seed from the node agent: libvirtd probes QEMU itself", "seed", l.opts.CapabilitiesSeed, "waited", l.opts.SeedTimeout)
	}
	daemon, err := virt.StartDaemon(ctx, virt.DaemonConfig{Dir: l.opts.PrivateDir, HostUUID: l.opts.PodUID, Log: logs,
		CapabilitiesSeed: l.opts.CapabilitiesSeed})
	if err != nil {
		s.err = fmt.Errorf("starting libvirtd: %w", err)
		return
	}
	conn, err := daemon.Connect(ctx)
	if err == nil {
		s.events, err = conn.Events(ctx)
		if err != nil {
			conn.Close()
		}
	}
	if err != nil {
		stopDaemon(daemon)
		s.err = fmt.Errorf("connecting to libvirtd: %w", err)
		return
	}
	l.daemon, l.conn = daemon, conn
	// libvirt probes QEMU's capabilities on its first domain (2-3 s); do it while waiting.
	go func() { _, _ = conn.DomainCapabilities(ctx, virt.Emulation(l.emulation)) }()
}

// awaitLibvirt waits until libvirt is ready; afterwards l.daemon and l.conn may be used.
func (l *launcher) awaitLibvirt(ctx context.Context) error {
	select {
	case <-l.lv.ready:
		return l.lv.err
	case <-ctx.Done():
		return errors.Join(errors.New("waiting for libvirtd"), ctx.Err())
	}
}

// waitForSeed waits until the node agent's capabilities seed is in place (a directory it
// renames into place complete), for at most timeout; it reports whether it is.
func waitForSeed(ctx context.Context, seed string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if fi, err := os.Lstat(seed); err == nil && fi.IsDir() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}
