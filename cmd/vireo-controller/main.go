// Command vireo-controller runs Vireo's cluster-wide reconcilers.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/controllers/manager"
	"github.com/vireo-dev/vireo/internal/gomemlimit"
)

func main() {
	opts := manager.NewOptions()
	cmd := &cobra.Command{
		Use:          "vireo-controller",
		Short:        "Reconcile VirtualMachineInstances, VirtualMachines, migrations and DataVolumes",
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			gomemlimit.FromContainer(gomemlimit.Ratio)
			return manager.Run(ctx, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}
