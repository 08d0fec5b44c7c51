package cmd

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vireo-dev/vireo/localcluster/node"
)

// nodeCommand runs one local node; vireo-local up starts it inside the node's network
// namespace, so users do not run it by hand.
func nodeCommand() *cobra.Command {
	var cfg node.Config
	var address string
	cfg.KubernetesService = net.TCPAddr{IP: net.IPv4(10, 96, 0, 1), Port: 443}
	cmd := &cobra.Command{
		Use:    "node",
		Short:  "Run a local node: register it, keep it Ready and run the Pods bound to it as host processes",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg.Address = net.ParseIP(address)
			if cfg.Address == nil || cfg.Name == "" || cfg.Root == "" || cfg.Kubeconfig == "" {
				return fmt.Errorf("--name, --address (an IP), --root and --kubeconfig are required")
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if cfg.BinDir == "" {
				cfg.BinDir = filepath.Dir(self)
			}
			if cfg.Self, err = shimBinary(self); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return node.Run(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Name, "name", "", "The Node's name.")
	f.StringVar(&address, "address", "", "The node's InternalIP (in its network namespace); its API listens there on port 10250.")
	f.StringVar(&cfg.Root, "root", "", "The node's directory (Pods, logs, volumes, CNI state).")
	f.StringVar(&cfg.BinDir, "bin-dir", "", "Directory of the binaries images map to (default: this executable's).")
	f.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "Kubeconfig with the node's client certificate (system:node:<name>).")
	f.StringVar(&cfg.ServingCert, "serving-cert", "", "The node API's serving certificate.")
	f.StringVar(&cfg.ServingKey, "serving-key", "", "The node API's serving key.")
	f.StringVar(&cfg.ClientCA, "client-ca", "", "CA of the client certificates the node API accepts.")
	f.IntVar(&cfg.Share, "share", 1, "Report 1/share of the host's CPUs and memory (the number of local nodes).")
	f.StringVar(&cfg.NetnsPrefix, "netns-prefix", "vireo", "Prefix of the Pods' network namespace names (<prefix>-<node>-pod-<uid>).")
	return cmd
}

// shimName is the binary that starts and supervises the nodes' containers, next to vireo-local.
const shimName = "vireo-local-shim"

// shimBinary is the container shim beside vireo-local executable self.
func shimBinary(self string) (string, error) {
	shim := filepath.Join(filepath.Dir(self), shimName)
	if fi, err := os.Stat(shim); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("the container shim %s is missing or not executable (make build builds it next to vireo-local)", shim)
	}
	return shim, nil
}

// pauseCommand is the registry.k8s.io/pause image on vireo-local: it sleeps until signalled.
func pauseCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "pause",
		Short:  "Sleep until SIGTERM or SIGINT (the pause image)",
		Hidden: true,
		Run: func(*cobra.Command, []string) {
			ch := make(chan os.Signal, 1)
			signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
			<-ch
		},
	}
}
