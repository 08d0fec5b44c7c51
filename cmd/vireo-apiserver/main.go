// Command vireo-apiserver serves Vireo's API groups as an aggregated API server.
package main

import (
	"os"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/apiserver"
	"github.com/vireo-dev/vireo/internal/gomemlimit"
)

func main() {
	opts := apiserver.NewOptions()
	cmd := &cobra.Command{
		Use:          "vireo-apiserver",
		Short:        "Serve the kubevirt.io and cdi.kubevirt.io APIs from Vireo's own etcd",
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			ratio := gomemlimit.Ratio
			if opts.EmbedsEtcd() {
				ratio = gomemlimit.RatioWithMappedDatabase
			}
			gomemlimit.FromContainer(ratio)
			return apiserver.Run(genericapiserver.SetupSignalContext(), opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}
