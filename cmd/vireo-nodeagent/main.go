// Command vireo-nodeagent runs Vireo's per-node agent.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/nodeagent"
	"github.com/vireo-dev/vireo/nodeagent/networkhelper"
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
	cmd.AddCommand(networkHelperCommand())
	os.Exit(cli.Run(cmd))
}

// networkHelperCommand runs the node's network helper, in its own container of the agent's Pod.
func networkHelperCommand() *cobra.Command {
	dir := nodeagent.DefaultNetworkHelperDir
	cmd := &cobra.Command{
		Use:          "network-helper",
		Short:        "Set up the masquerade binding in launcher Pods' network namespaces when the node agent asks",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return networkhelper.Serve(ctx, dir)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", dir, "Directory of the helper's socket, shared with the node agent's container only.")
	return cmd
}
