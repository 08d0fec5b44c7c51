package vireoctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

type portForwardOptions struct {
	stdio   bool
	address string
}

// forwardedPort is one [PROTOCOL/]LOCAL[:REMOTE] argument.
type forwardedPort struct {
	protocol      string
	local, remote int
}

func newPortForwardCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &portForwardOptions{address: "127.0.0.1"}
	cmd := &cobra.Command{
		Use:   "port-forward TYPE/NAME[/NAMESPACE] [PROTOCOL/]LOCAL[:REMOTE]...",
		Short: "Forward local ports to a VM's or VMI's guest, through kube-apiserver",
		Long: `Listen on local ports and forward each connection (TCP) or each client's datagrams (UDP) to
a port of the guest, through kube-apiserver's port-forward subresource. TYPE is vm or vmi;
PROTOCOL is tcp (the default) or udp; REMOTE defaults to LOCAL.`,
		Example: `  vireoctl port-forward vmi/tiny 8080:80
  vireoctl port-forward vm/web/prod udp/5353:53 tcp/2222:22
  ssh -o ProxyCommand='vireoctl port-forward --stdio vm/web 22' root@vm/web`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			resource, namespace, name, err := parseForwardTarget(args[0])
			if err != nil {
				return err
			}
			ports, err := parseForwardedPorts(args[1:])
			if err != nil {
				return err
			}
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			if namespace != "" {
				t.namespace = namespace
			}
			f := &forwarder{t: t, resource: resource, name: name, errOut: streams.ErrOut}
			if o.stdio {
				if len(ports) != 1 || ports[0].protocol != "tcp" {
					return errors.New("--stdio forwards exactly one TCP port")
				}
				return f.stdio(ports[0].remote, streams.In, streams.Out)
			}
			return f.listen(orBackground(c.Context()), o.address, ports, streams.Out)
		},
	}
	cmd.Flags().BoolVar(&o.stdio, "stdio", o.stdio, "Forward standard input and output to the one port given (for ssh's ProxyCommand).")
	cmd.Flags().StringVar(&o.address, "address", o.address, "Local address to listen on.")
	return cmd
}

// parseForwardTarget reads TYPE/NAME[/NAMESPACE] as virtctl does: TYPE is vm or vmi (or their
// long and plural names).
func parseForwardTarget(arg string) (resource, namespace, name string, err error) {
	parts := strings.Split(arg, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return "", "", "", fmt.Errorf("target %q: want TYPE/NAME or TYPE/NAME/NAMESPACE, such as vm/web or vmi/web/prod", arg)
	}
	switch strings.ToLower(parts[0]) {
	case "vm", "vms", "virtualmachine", "virtualmachines":
		resource = "virtualmachines"
	case "vmi", "vmis", "virtualmachineinstance", "virtualmachineinstances":
		resource = "virtualmachineinstances"
	default:
		return "", "", "", fmt.Errorf("target %q: type %q must be vm or vmi", arg, parts[0])
	}
	name = parts[1]
	if name == "" {
		return "", "", "", fmt.Errorf("target %q: the name is empty", arg)
	}
	if len(parts) == 3 {
		if namespace = parts[2]; namespace == "" {
			return "", "", "", fmt.Errorf("target %q: the namespace is empty", arg)
		}
	}
	return resource, namespace, name, nil
}

// parseForwardedPorts reads [PROTOCOL/]LOCAL[:REMOTE] arguments.
func parseForwardedPorts(args []string) ([]forwardedPort, error) {
	ports := make([]forwardedPort, 0, len(args))
	for _, arg := range args {
		p := forwardedPort{protocol: "tcp"}
		spec := arg
		if proto, rest, ok := strings.Cut(arg, "/"); ok {
			p.protocol, spec = strings.ToLower(proto), rest
		}
		if p.protocol != "tcp" && p.protocol != "udp" {
			return nil, fmt.Errorf("port %q: protocol %q must be tcp or udp", arg, p.protocol)
		}
		local, remote, hasRemote := strings.Cut(spec, ":")
		var err error
		if p.local, err = portNumber(local, true); err != nil {
			return nil, fmt.Errorf("port %q: local port %w", arg, err)
		}
		p.remote = p.local
		if hasRemote {
			if p.remote, err = portNumber(remote, false); err != nil {
				return nil, fmt.Errorf("port %q: remote port %w", arg, err)
			}
		}
		if p.remote == 0 {
			return nil, fmt.Errorf("port %q: give the remote port (LOCAL:REMOTE) when the local one is 0", arg)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

func portNumber(s string, zeroOK bool) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !zeroOK) {
		return 0, fmt.Errorf("%q must be a number from 1 to 65535", s)
	}
	return n, nil
}

// forwarder opens tunnels to one VM's or VMI's ports.
type forwarder struct {
	t              *target
	resource, name string
	errOut         io.Writer
}

// open opens one tunnel to port.
func (f *forwarder) open(port forwardedPort) (*websocket.Conn, error) {
	ws, _, err := f.t.dialResource(f.resource, f.name, fmt.Sprintf("portforward/%d/%s", port.remote, port.protocol))
	return ws, err
}

// stdio forwards standard input and output to a TCP port until either side ends.
func (f *forwarder) stdio(port int, in io.Reader, out io.Writer) error {
	ws, err := f.open(forwardedPort{protocol: "tcp", remote: port})
	if err != nil {
		return err
	}
	defer ws.Close()
	return splice(ws, in, out, true)
}

// listen listens on every port and forwards until ctx ends (Ctrl-C) or a listener fails.
func (f *forwarder) listen(ctx context.Context, address string, ports []forwardedPort, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(ports))
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, p := range ports {
		addr := net.JoinHostPort(address, strconv.Itoa(p.local))
		var serve func() error
		if p.protocol == "udp" {
			pc, err := net.ListenUDP("udp", udpAddr(address, p.local))
			if err != nil {
				return fmt.Errorf("listening on udp %s: %w", addr, err)
			}
			go func() { <-ctx.Done(); pc.Close() }()
			fmt.Fprintf(out, "Forwarding udp %s -> %s %s/%s port %d\n", pc.LocalAddr(), kindName(f.resource), f.t.namespace, f.name, p.remote)
			serve = func() error { return f.serveUDP(ctx, pc, p) }
		} else {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listening on tcp %s: %w", addr, err)
			}
			go func() { <-ctx.Done(); l.Close() }()
			fmt.Fprintf(out, "Forwarding tcp %s -> %s %s/%s port %d\n", l.Addr(), kindName(f.resource), f.t.namespace, f.name, p.remote)
			serve = func() error { return f.serveTCP(ctx, l, p) }
		}
		wg.Add(1)
		go func() { defer wg.Done(); errc <- serve() }()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

func udpAddr(address string, port int) *net.UDPAddr {
	return &net.UDPAddr{IP: net.ParseIP(address), Port: port}
}

// serveTCP forwards each accepted connection through a tunnel of its own.
func (f *forwarder) serveTCP(ctx context.Context, l net.Listener, p forwardedPort) error {
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer conn.Close()
			ws, err := f.open(p)
			if err != nil {
				fmt.Fprintf(f.errOut, "connection from %s: %v\n", conn.RemoteAddr(), err)
				return
			}
			defer ws.Close()
			if err := splice(ws, conn, conn, false); err != nil {
				fmt.Fprintf(f.errOut, "connection from %s: %v\n", conn.RemoteAddr(), err)
			}
		}()
	}
}

// splice copies in to the tunnel and the tunnel to out until either side ends (closing out is
// the caller's). The tunnel has no half-close: when in ends, splice closes the tunnel at once,
// or, with waitGuest, keeps sending the guest's answer to out until the guest ends (standard
// input ending after a request, as in printf 'GET / HTTP/1.0\r\n\r\n' | vireoctl port-forward --stdio).
func splice(ws *websocket.Conn, in io.Reader, out io.Writer, waitGuest bool) error {
	errc := make(chan error, 2)
	go func() { // local -> guest
		buf := make([]byte, 32<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				if werr := ws.WriteMessage(websocket.BinaryMessage, buf[:n]); werr != nil {
					errc <- werr
					return
				}
			}
			if err != nil {
				if waitGuest {
					return
				}
				_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
				errc <- nil
				return
			}
		}
	}()
	go func() { // guest -> local
		for {
			kind, r, err := ws.NextReader()
			if err != nil {
				errc <- tunnelEnded(err)
				return
			}
			if kind != websocket.BinaryMessage {
				continue
			}
			if _, err := io.Copy(out, r); err != nil {
				errc <- nil
				return
			}
		}
	}()
	return <-errc
}

// tunnelEnded is nil for a normal close and the server's reason otherwise.
func tunnelEnded(err error) error {
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce) && ce.Code == websocket.CloseNormalClosure && ce.Text == "":
		return nil
	case errors.As(err, &ce):
		return fmt.Errorf("ended: %s", ce.Text)
	case errors.Is(err, net.ErrClosed):
		return nil
	}
	return err
}

// serveUDP forwards each local client's datagrams through a tunnel of its own, one message per
// datagram, and sends the guest's answers back to that client.
func (f *forwarder) serveUDP(ctx context.Context, pc *net.UDPConn, p forwardedPort) error {
	var mu sync.Mutex
	clients := map[string]*websocket.Conn{}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, ws := range clients {
			ws.Close()
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, from, err := pc.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		key := from.String()
		mu.Lock()
		ws, ok := clients[key]
		if !ok {
			if ws, err = f.open(p); err != nil {
				mu.Unlock()
				fmt.Fprintf(f.errOut, "datagrams from %s: %v\n", key, err)
				continue
			}
			clients[key] = ws
			go func() {
				for {
					_, b, err := ws.ReadMessage()
					if err != nil {
						break
					}
					_, _ = pc.WriteToUDP(b, from)
				}
				mu.Lock()
				delete(clients, key)
				mu.Unlock()
				ws.Close()
			}()
		}
		mu.Unlock()
		if err := ws.WriteMessage(websocket.BinaryMessage, buf[:n]); err != nil {
			fmt.Fprintf(f.errOut, "datagrams from %s: %v\n", key, err)
		}
	}
}
