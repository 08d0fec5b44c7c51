// Package cmd is the command line of vireo-local: up, down, status, restart, backup, restore and artifact-certs
// (and the hidden commands of the processes up starts: supervise, registry).
package cmd

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vireo-dev/vireo/localcluster"
)

// New returns the vireo-local command.
func New(out io.Writer) *cobra.Command {
	opts := localcluster.DefaultOptions(out)
	root := &cobra.Command{
		Use:          "vireo-local",
		Short:        "Run Vireo on this machine: a real single-node Kubernetes with Vireo aggregated into it",
		SilenceUsage: true,
	}
	root.PersistentFlags().StringVar(&opts.Root, "root", opts.Root, "Directory for certificates, data, pid files and logs.")
	root.PersistentFlags().StringVar(&opts.BinDir, "bin-dir", opts.BinDir, "Directory of the binaries to run.")
	root.PersistentFlags().StringVar(&opts.ManifestsDir, "manifests", opts.ManifestsDir, "The repository's artifacts directory (RBAC is applied from it).")
	root.PersistentFlags().StringVar(&opts.Images, "images", opts.Images, "The test guest images directory (made by make images), whose containerDisks the registry serves (default: images beside --bin-dir).")

	var nodes int
	up := &cobra.Command{
		Use:   "up",
		Short: "Start every component that is not running and wait until the APIServices are Available",
		RunE: func(c *cobra.Command, _ []string) error {
			o := opts
			o.Nodes = nodes
			if !c.Flags().Changed("ha") {
				o.HA = localcluster.InstalledHA(o.Layout)
			}
			return localcluster.New(o).Up(c.Context())
		},
	}
	up.Flags().StringSliceVar(&opts.Examples, "apply", nil, "Manifests to create once the API is ready (existing objects are left alone, but for a VirtualMachineInstance that has ended: it is created anew).")
	up.Flags().IntVar(&nodes, "nodes", 0, "Number of local nodes, each a kubelet with containerd in its own network namespace, with its own address (default: as many as the last up started, else 1); later commands remember it. Nodes can be added, not removed.")
	up.Flags().BoolVar(&opts.HA, "ha", false, "Run the control plane highly available, as artifacts/base does: two vireo-apiserver replicas serving from a three-member etcd on this host, two vireo-controller replicas with one leader (default: as the installation was made). An installation keeps its mode.")

	var purge bool
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop every component (data is kept unless --purge)",
		RunE: func(*cobra.Command, []string) error {
			return localcluster.New(installed(opts)).Down(purge)
		},
	}
	down.Flags().BoolVar(&purge, "purge", false, "Also delete data, certificates, logs and the network namespace.")

	status := &cobra.Command{
		Use:   "status",
		Short: "Show each component (state, pid, uptime, restarts after crashes, log), the supervisor and the APIServices",
		Run: func(c *cobra.Command, _ []string) {
			localcluster.New(installed(opts)).Status(c.Context())
		},
	}

	restart := &cobra.Command{
		Use:   "restart COMPONENT",
		Short: "Stop and start one component (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, registry, vireo-apiserver, vireo-controller) and wait until it is ready",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return localcluster.New(installed(opts)).Restart(c.Context(), args[0])
		},
	}

	backup := &cobra.Command{
		Use:   "backup FILE",
		Short: "Save a snapshot of the etcd holding Vireo's objects to FILE (etcd's snapshot format; Vireo keeps serving)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return localcluster.New(installed(opts)).Backup(c.Context(), args[0])
		},
	}
	restore := &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace Vireo's objects with those of a snapshot `backup` saved: vireo-apiserver stops meanwhile; guests keep running and are adopted again",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return localcluster.New(installed(opts)).Restore(c.Context(), args[0])
		},
	}

	var certDir string
	certs := &cobra.Command{
		Use:   "artifact-certs",
		Short: "Write the CA and certificates artifacts/base expects (for a real cluster)",
		RunE: func(*cobra.Command, []string) error {
			return localcluster.WriteArtifactCerts(certDir)
		},
	}
	certs.Flags().StringVar(&certDir, "dir", "artifacts/base/certs", "Directory to write ca.crt, apiserver.{crt,key} and etcd-{server,peer,client}.{crt,key} to.")
	root.AddCommand(up, down, status, restart, backup, restore, certs, superviseCommand(&opts), registryCommand())
	return root
}

// installed is opts with the network and ports of the installation under --root, when an
// up recorded them (an installation made by the e2e tests does not use the defaults).
func installed(opts localcluster.Options) localcluster.Options {
	if rec, err := localcluster.LoadRecordedOptions(opts); err == nil {
		return rec
	}
	return opts
}
