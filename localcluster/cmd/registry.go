package cmd

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vireo-dev/vireo/localcluster/imageregistry"
)

// registryCommand is the installation's OCI registry, which vireo-local up starts (and the
// supervisor restarts); users do not run it by hand.
func registryCommand() *cobra.Command {
	var cfg imageregistry.Config
	cmd := &cobra.Command{
		Use:    "registry",
		Short:  "Serve the installation's OCI registry over plain HTTP, with the test guests' containerDisks loaded",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return imageregistry.ListenAndServe(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Address, "address", "127.0.0.1:5000", "Address to listen on (host:port).")
	f.StringVar(&cfg.Storage, "storage", "", "Directory of the blobs (kept across restarts).")
	f.StringVar(&cfg.Images, "images", "_output/images", "Guest images directory: each <dir>/containerdisk OCI layout is served as vireo/<dir>-containerdisk:latest.")
	f.StringArrayVar(&cfg.OCIImages, "oci-images", nil, "The project's images (make oci): each <dir>/<name> OCI layout is served as vireo/<name>:latest, and by its digest. Repeatable: a later directory's images take the tag.")
	f.StringVar(&cfg.CredentialsFile, "credentials-file", "", "File with the user and password (JSON) of the private/ repositories, created when missing; empty: no private repositories.")
	_ = cmd.MarkFlagRequired("storage")
	return cmd
}
