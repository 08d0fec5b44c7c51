// Command vireo-launcher runs one VMI's libvirt and QEMU inside its launcher Pod.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/launcher"
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
	cmd.AddCommand(probe)
	if rc := cli.Run(cmd); rc != 0 {
		os.Exit(rc)
	}
	os.Exit(code)
}
