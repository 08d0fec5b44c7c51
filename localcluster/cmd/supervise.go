package cmd

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vireo-dev/vireo/localcluster"
)

// superviseCommand is the supervisor `vireo-local up` starts last (and `down` stops first):
// it restarts the installation's processes when they crash. Users do not run it by hand.
func superviseCommand(opts *localcluster.Options) *cobra.Command {
	return &cobra.Command{
		Use:    "supervise",
		Short:  "Restart the installation's processes when they crash (started by up)",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			// The network and ports of the Up that started the installation; the number of
			// nodes is read from the run directory (Options.Nodes stays 0).
			recorded, err := localcluster.LoadRecordedOptions(*opts)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return localcluster.New(recorded).Supervise(ctx)
		},
	}
}
