package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// socketProxy serves sockets in a Pod's directory and connects each connection to the same
// socket elsewhere: a migration's sockets in the source launcher's directory, relayed to the
// target launcher (libvirt's RPC, QEMU's stream and the disks' NBD), and a clone's upload
// socket in its source Pod's emptyDir, relayed to the target's upload Pod. dial opens a
// connection to the far end's socket name.
type socketProxy struct {
	listeners []net.Listener
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	closed    bool
}

// startSocketProxy listens on the sockets names in the directory of Pod source.
func (d nodeDirs) startSocketProxy(source types.UID, names []string, dial func(ctx context.Context, name string) (net.Conn, error)) (*socketProxy, error) {
	p := &socketProxy{conns: map[net.Conn]struct{}{}}
	for _, name := range names {
		ln, err := d.listenSocket(source, name)
		if err != nil {
			p.close()
			return nil, err
		}
		p.listeners = append(p.listeners, ln)
		p.wg.Add(1)
		go p.serve(ln, name, dial)
	}
	return p, nil
}

func (p *socketProxy) serve(ln net.Listener, name string, dial func(ctx context.Context, name string) (net.Conn, error)) {
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
func (p *socketProxy) splice(c net.Conn, name string, dial func(ctx context.Context, name string) (net.Conn, error)) {
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
	spliceConns(c, t)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

func (p *socketProxy) track(conns ...net.Conn) bool {
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

func (p *socketProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.conns, c)
	}
}

// close stops listening and cuts every connection.
func (p *socketProxy) close() {
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

// listenSocket binds the socket name (a fixed protocol name) in the directory of launcher Pod
// podUID for the launcher's user. The directory is opened without symlinks (openEmptyDir) and the
// socket bound and handed over through that descriptor, so nothing the launcher planted is
// followed.
func (d nodeDirs) listenSocket(podUID types.UID, name string) (net.Listener, error) {
	dirFD, err := d.openEmptyDir(podUID, unix.O_PATH)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirFD)
	if err := unix.Unlinkat(dirFD, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("removing the old %s of Pod %s: %w", name, podUID, err)
	}
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(dirFD)+"/"+name)
	if err != nil {
		return nil, fmt.Errorf("listening on %s of Pod %s: %w", name, podUID, err)
	}
	// The listener removes its path on Close: the path is the descriptor's, gone by then.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := unix.Fchownat(dirFD, name, LauncherUser, LauncherUser, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		ln.Close()
		return nil, fmt.Errorf("giving %s of Pod %s to the launcher: %w", name, podUID, err)
	}
	return ln, nil
}
