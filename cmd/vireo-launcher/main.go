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
		Use:          "vireo-launcher",
		Short:        "Run one VMI's guest under QEMU through a session libvirtd",
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			sigterm := make(chan os.Signal, 1)
			signal.Notify(sigterm, syscall.SIGTERM, os.Interrupt)
			var err error
			code, err = launcher.Run(context.Background(), opts, sigterm, os.Stderr)
			return err
		},
	}
	opts.AddFlags(cmd.Flags())
	if rc := cli.Run(cmd); rc != 0 {
		os.Exit(rc)
	}
	os.Exit(code)
}
