// Command vireo-importer fills a volume with a disk image: it downloads, verifies,
// decompresses and converts the image into a sparse raw disk.img (the importer Pod of a
// DataVolume). It exits 1 on a failure worth retrying (the network, a server error) and 2 on
// one that is not (importerapi.ExitPermanent).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/importer"
	"github.com/vireo-dev/vireo/importer/importerapi"
)

func main() {
	opts := importer.NewCommandOptions()
	var runErr error
	cmd := &cobra.Command{
		Use:          "vireo-importer",
		Short:        "Write a disk image from a URL, a file or nothing into a volume as a raw disk.img",
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			runErr = opts.Run(ctx)
			return runErr
		},
	}
	opts.AddFlags(cmd.Flags())
	var sendPath, sendSocket string
	send := &cobra.Command{
		Use:          "send --path FILE --upload-socket SOCKET",
		Short:        "Send a disk image to an importer's upload socket (the source side of a clone across namespaces)",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if sendPath == "" || sendSocket == "" {
				runErr = fmt.Errorf("send needs --path and --upload-socket")
				return runErr
			}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			runErr = importer.Send(ctx, sendPath, sendSocket)
			return runErr
		},
	}
	send.Flags().StringVar(&sendPath, "path", "", "The disk image to send.")
	send.Flags().StringVar(&sendSocket, "upload-socket", "", "The target importer's upload socket.")
	cmd.AddCommand(send)
	code := cli.Run(cmd)
	if code != 0 && runErr != nil {
		// The last line of the log is the plain message: the importer Pod's termination
		// message (FallbackToLogsOnError) ends with it, for the DataVolume's condition.
		fmt.Fprintln(os.Stderr, runErr)
		if !importer.IsTransient(runErr) {
			code = importerapi.ExitPermanent
		}
	}
	os.Exit(code)
}
