package relay

import (
	"context"
	"net"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// Dialer opens a connection to the far end's socket name.
type Dialer func(ctx context.Context, name string) (net.Conn, error)

// SocketProxy serves sockets in a Pod's directory and connects each connection to the same
// socket elsewhere: a migration's sockets in the source launcher's directory, relayed to the
// target launcher (libvirt's RPC, QEMU's stream and the disks' NBD), and a clone's upload
// socket in its source Pod's emptyDir, relayed to the target's upload Pod.
type SocketProxy struct {
	listeners []net.Listener
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	closed    bool
}

// StartSocketProxy listens on the sockets names in the emptyDir of Pod source (for the
// launcher's user, replacing whatever was there, following no link: nodedirs.ListenSocket).
func StartSocketProxy(d nodedirs.Dirs, source types.UID, names []string, dial Dialer) (*SocketProxy, error) {
	p := &SocketProxy{conns: map[net.Conn]struct{}{}}
	for _, name := range names {
		ln, err := d.ListenSocket(source, name)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.listeners = append(p.listeners, ln)
		p.wg.Add(1)
		go p.serve(ln, name, dial)
	}
	return p, nil
}

func (p *SocketProxy) serve(ln net.Listener, name string, dial Dialer) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.splice(c, name, dial)
	}
}

// splice connects c to the target's socket name and copies both ways until either side ends.
func (p *SocketProxy) splice(c net.Conn, name string, dial Dialer) {
	t, err := dial(context.Background(), name)
	if err != nil {
		klog.ErrorS(err, "Socket proxy cannot reach the far end", "socket", name)
		c.Close()
		return
	}
	if !p.track(c, t) {
		return
	}
	defer p.untrack(c, t)
	Splice(c, t)
}

func (p *SocketProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *SocketProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Close stops listening and cuts every connection.
func (p *SocketProxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	for _, ln := range p.listeners {
		ln.Close()
	}
	p.wg.Wait()
}
