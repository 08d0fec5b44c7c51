package vireoctl

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

type vncOptions struct {
	proxyOnly bool
	port      int
	address   string
}

// viewers are VNC viewers vireoctl starts when found on the PATH (without --proxy-only).
var viewers = []string{"vncviewer", "remote-viewer", "tigervnc", "xtightvncviewer"}

func newVNCCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &vncOptions{address: "127.0.0.1"}
	cmd := &cobra.Command{
		Use:   "vnc NAME",
		Short: "Open the display of a VMI: a local VNC port, and a viewer found on the PATH",
		Long: `Listen on a local port for VNC viewers and connect each one to the display of the VMI
through kube-apiserver. Without --proxy-only, a VNC viewer found on the PATH (` + fmt.Sprint(viewers) + `)
is started against the port; vireoctl exits when it does.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMIs),
		RunE: func(c *cobra.Command, args []string) error {
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			return o.run(c.Context(), t, args[0], streams)
		},
	}
	cmd.Flags().BoolVar(&o.proxyOnly, "proxy-only", o.proxyOnly, "Only listen for viewers; do not start one.")
	cmd.Flags().IntVar(&o.port, "port", o.port, "Local port to listen on (0: any free port).")
	cmd.Flags().StringVar(&o.address, "address", o.address, "Local address to listen on; the default keeps the display to this machine.")
	cmd.AddCommand(newScreenshotCommand(flags, streams))
	return cmd
}

func (o *vncOptions) run(ctx context.Context, t *target, name string, streams genericiooptions.IOStreams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	l, err := net.Listen("tcp", net.JoinHostPort(o.address, strconv.Itoa(o.port)))
	if err != nil {
		return fmt.Errorf("listening for VNC viewers: %w", err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	fmt.Fprintf(streams.Out, "VNC of %s/%s at %s\n", t.namespace, name, l.Addr())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !o.proxyOnly {
		viewer := ""
		for _, v := range viewers {
			if p, err := exec.LookPath(v); err == nil {
				viewer = p
				break
			}
		}
		if viewer == "" {
			return fmt.Errorf("no VNC viewer on the PATH (%v): use --proxy-only and connect one to %s", viewers, l.Addr())
		}
		cmd := exec.CommandContext(ctx, viewer, net.JoinHostPort(o.address, strconv.Itoa(port)))
		cmd.Stdout, cmd.Stderr = streams.ErrOut, streams.ErrOut
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() { _ = cmd.Wait(); cancel(); l.Close() }()
	}
	go func() { <-ctx.Done(); l.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := spliceVNC(t, name, conn); err != nil {
				fmt.Fprintf(streams.ErrOut, "VNC session: %v\n", err)
			}
		}()
	}
}

// spliceVNC connects one viewer to the VMI's display until either side ends.
func spliceVNC(t *target, name string, conn net.Conn) error {
	defer conn.Close()
	ws, _, err := t.dial(name, "vnc")
	if err != nil {
		return err
	}
	defer ws.Close()
	return splice(ws, conn, conn, false)
}
