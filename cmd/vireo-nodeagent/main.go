// Command vireo-nodeagent runs Vireo's per-node agent.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/nodeagent"
)

func main() {
	opts := nodeagent.NewOptions()
	cmd := &cobra.Command{
		Use:          "vireo-nodeagent",
		Short:        "Drive the launchers of the VMIs on this node and report their status",
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			agent, err := nodeagent.New(opts)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return agent.Run(ctx)
		},
	}
	opts.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}
