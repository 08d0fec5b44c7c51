// Package cmd is the command line of vireo-local: up, down and status.
package cmd

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vireo-dev/vireo/localcluster"
)

// New returns the vireo-local command.
func New(out io.Writer) *cobra.Command {
	opts := localcluster.Options{
		Layout:        localcluster.Layout{Root: "_output/local", BinDir: "_output/bin"},
		APIServerPort: 8443,
		Out:           out,
	}
	root := &cobra.Command{
		Use:          "vireo-local",
		Short:        "Run Vireo on this machine",
		SilenceUsage: true,
	}
	root.PersistentFlags().StringVar(&opts.Root, "root", opts.Root, "Directory for certificates, data, pid files and logs.")
	root.PersistentFlags().StringVar(&opts.BinDir, "bin-dir", opts.BinDir, "Directory of the binaries to run.")
	root.PersistentFlags().IntVar(&opts.APIServerPort, "apiserver-port", opts.APIServerPort, "Secure port of vireo-apiserver on 127.0.0.1.")

	up := &cobra.Command{
		Use:   "up",
		Short: "Start every component that is not running and wait until the API is ready",
		RunE: func(c *cobra.Command, _ []string) error {
			return localcluster.New(opts).Up(c.Context())
		},
	}
	up.Flags().StringSliceVar(&opts.Examples, "apply", nil, "Manifests to create once the API is ready (existing objects are left alone).")

	var purge bool
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop every component (data is kept unless --purge)",
		RunE: func(*cobra.Command, []string) error {
			return localcluster.New(opts).Down(purge)
		},
	}
	down.Flags().BoolVar(&purge, "purge", false, "Also delete data, certificates and logs.")

	status := &cobra.Command{
		Use:   "status",
		Short: "Show each component and whether the API answers",
		Run: func(c *cobra.Command, _ []string) {
			localcluster.New(opts).Status(c.Context())
		},
	}
	root.AddCommand(up, down, status)
	return root
}
