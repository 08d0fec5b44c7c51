// Command vireo-launcher runs one VMI's libvirt and QEMU inside its launcher Pod.
package main

import (
	"context"
	"errors"
	goflag "flag"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/launcher"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

func main() {
	opts := launcher.NewOptions()
	code := 0
	cmd := &cobra.Command{
		Use: "vireo-launcher", Short: "Run one VMI's guest under QEMU through a session libvirtd", SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			sigterm := make(chan os.Signal, 1)
			signal.Notify(sigterm, syscall.SIGTERM, os.Interrupt)
			var err error
			code, err = launcher.Run(context.Background(), opts, sigterm, os.Stderr)
			return err
		},
	}
	opts.AddFlags(cmd.Flags())
	var privateDir, out string
	probe := &cobra.Command{
		Use: "probe-capabilities", Short: "Probe QEMU's capabilities once for the launchers of this node (the node agent's init container)", SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return launcher.ProbeCapabilities(context.Background(), privateDir, out, os.Stderr)
		},
	}
	probe.Flags().StringVar(&privateDir, "private-dir", "/var/run/vireo-probe/libvirt", "A private directory for the probing libvirtd.")
	probe.Flags().StringVar(&out, "out", "/var/run/vireo-probe/capabilities", "Where to write the capabilities files.")
	cmd.AddCommand(probe, guestProbeCommand())
	addLogFlags(cmd)
	err := cmd.Execute()
	klog.Flush()
	if err != nil {
		os.Exit(1)
	}
	os.Exit(code)
}

// guestProbeCommand is the kubelet's exec probe of the launcher container for a VMI's exec and
// guestAgentPing probes: it asks the running launcher to probe the guest through its agent and
// exits 0 when the guest is healthy.
func guestProbeCommand() *cobra.Command {
	req := &protocol.GuestProbeRequest{}
	dir := protocol.LauncherDir
	cmd := &cobra.Command{
		Use:          "guest-probe [--guest-agent-ping | -- COMMAND [ARG...]]",
		Short:        "Probe the guest through its agent: a ping, or a command that must exit 0 (the VMI's exec and guestAgentPing probes)",
		SilenceUsage: true,
		RunE: func(c *cobra.Command, args []string) error {
			req.Command = args
			if req.Ping == (len(args) > 0) {
				return errors.New("give either --guest-agent-ping or a command after --")
			}
			return launcher.RunGuestProbe(context.Background(), dir, req)
		},
	}
	cmd.Flags().BoolVar(&req.Ping, "guest-agent-ping", false, "Ping the guest agent.")
	cmd.Flags().DurationVar(&req.Timeout, "timeout", time.Second, "How long the guest may take to answer.")
	cmd.Flags().StringVar(&dir, "dir", dir, "The launcher's directory (its command socket).")
	return cmd
}

// addLogFlags gives the command klog's verbosity flags. The launcher runs once per VMI, so it
// does without component-base's command runner, which would link Prometheus and OpenTelemetry
// into every launcher (8 MB of a binary that is resident in full in each launcher Pod).
func addLogFlags(cmd *cobra.Command) {
	fs := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(fs)
	for _, name := range []string{"v", "vmodule"} {
		cmd.PersistentFlags().AddGoFlag(fs.Lookup(name))
	}
}
