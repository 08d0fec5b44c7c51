package vireoctl

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/internal/webui"
	"github.com/vireo-dev/vireo/internal/webui/assets"
)

// uiOptions are the flags of `vireoctl ui`.
type uiOptions struct {
	address string
	port    int
	open    bool
	// openURL opens the URL in a browser; tests replace it.
	openURL func(url string) error
}

// newUICommand is `vireoctl ui`: the web console, served on loopback and acting with the
// kubeconfig's credentials.
func newUICommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &uiOptions{openURL: openWithXDG}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the web console on loopback, acting with your kubeconfig's credentials",
		Long: `Serve Vireo's web console on a loopback address and print its URL, which carries a
secret for this run: open it in a browser on this machine. The console's requests go to
kube-apiserver with your kubeconfig's credentials (--kubeconfig, --context, --as... apply), so
it can do what kubectl can do for you, nothing more. Serves until interrupted (Ctrl+C).`,
		Example: `  vireoctl ui                 # prints http://127.0.0.1:PORT/?token=...
  vireoctl ui --port 8001 --open`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(orBackground(c.Context()), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return o.run(ctx, cfg, streams)
		},
	}
	cmd.Flags().StringVar(&o.address, "address", "127.0.0.1", "Loopback address to listen on: 127.0.0.1, ::1 or localhost (no other: the console acts with your credentials).")
	cmd.Flags().IntVar(&o.port, "port", 0, "TCP port to listen on; 0 picks a free one.")
	cmd.Flags().BoolVar(&o.open, "open", false, "Open the URL with xdg-open. Its command line, which other users of this machine may see, then holds the URL's secret.")
	return cmd
}

// run serves the console with cfg's credentials until ctx ends.
func (o *uiOptions) run(ctx context.Context, cfg *rest.Config, streams genericiooptions.IOStreams) error {
	files, err := assets.FS()
	if err != nil {
		return fmt.Errorf("web console assets: %w", err)
	}
	srv, err := webui.New(webui.Options{REST: cfg, Assets: files, Address: o.address, Port: o.port})
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.ErrOut, "Serving Vireo's web console for %s until interrupted (Ctrl+C). Open this URL, which holds a secret for this run, in a browser on this machine:\n", cfg.Host)
	fmt.Fprintln(streams.Out, srv.URL())
	if o.open {
		o.openBrowser(srv.URL(), streams.ErrOut)
	}
	return srv.Serve(ctx)
}

// openBrowser opens url in the background (xdg-open may wait for the browser it starts), saying
// so on errOut when it cannot.
func (o *uiOptions) openBrowser(url string, errOut io.Writer) {
	go func() {
		if err := o.openURL(url); err != nil {
			fmt.Fprintf(errOut, "Could not open a browser (xdg-open: %v): open the URL yourself.\n", err)
		}
	}()
}

// openWithXDG opens url with xdg-open.
func openWithXDG(url string) error {
	return exec.Command("xdg-open", url).Run()
}
