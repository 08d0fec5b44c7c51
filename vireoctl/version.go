package vireoctl

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/vireo-dev/vireo/version"
)

// newVersionCommand is `vireoctl version`: this binary's version and vireo-apiserver's (GET
// /apis/subresources.kubevirt.io/v1/version), in virtctl's format.
func newVersionCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server versions",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(streams.Out, "Client Version: %s\n", version.Get())
			if clientOnly {
				return nil
			}
			_, client, err := resolveREST(flags)
			if err != nil {
				return err
			}
			raw, err := client.Get().AbsPath("/apis/subresources.kubevirt.io/v1/version").Do(orBackground(c.Context())).Raw()
			if err != nil {
				return fmt.Errorf("server version: %w", err)
			}
			var server version.Info
			if err := json.Unmarshal(raw, &server); err != nil {
				return fmt.Errorf("server version: not a version (%v): %.200s", err, raw)
			}
			fmt.Fprintf(streams.Out, "Server Version: %s\n", server)
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Print only the client's version.")
	return cmd
}
