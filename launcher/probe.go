package launcher

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/vireo-dev/vireo/launcher/virt"
)

// ProbeCapabilities runs a session libvirtd in privateDir, has it probe QEMU's capabilities
// for this host's accelerator and copies the result into out, for the node agent to offer
// every launcher of the node as their seed. It is the node agent Pod's init container.
func ProbeCapabilities(ctx context.Context, privateDir, out string, logs io.Writer) error {
	began := time.Now()
	daemon, err := virt.StartDaemon(ctx, virt.DaemonConfig{Dir: privateDir, Log: logs})
	if err != nil {
		return fmt.Errorf("starting libvirtd: %w", err)
	}
	defer stopDaemon(daemon)
	conn, err := daemon.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	emulation, reason := virt.DetectEmulation()
	if _, err := conn.DomainCapabilities(ctx, emulation); err != nil {
		return fmt.Errorf("probing QEMU's capabilities (%s): %w", reason, err)
	}
	n, err := daemon.ExportCapabilities(out)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("libvirtd probed QEMU but left no capabilities file in %s", daemon.Layout().CapabilitiesDir())
	}
	fmt.Fprintf(logs, "probed QEMU's capabilities (%s) in %s: %d file(s) in %s\n", emulation, time.Since(began).Round(time.Millisecond), n, out)
	return nil
}
