// Package networkhelper is the node's one holder of network privilege: run as
// `vireo-nodeagent network-helper` in its own container of the node agent's Pod, with
// CAP_NET_ADMIN and CAP_SYS_ADMIN (to enter a namespace) and nothing else (no Kubernetes
// credentials, no network listener), it sets up the masquerade binding (package netnssetup) in
// the launcher Pods' network namespaces when the node agent asks over a unix socket in the
// directory only the two containers share. The node agent itself stays unprivileged.
package networkhelper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/internal/fdpass"
	"github.com/vireo-dev/vireo/internal/podnetwork"
	"github.com/vireo-dev/vireo/internal/podnetwork/netnssetup"
)

// SocketName is the helper's socket in the directory it shares with the node agent.
const SocketName = "network-helper.sock"

// requestTimeout bounds one request: reading it, setting up a namespace, answering.
const requestTimeout = 30 * time.Second

// Serve answers the node agent's requests on dir/SocketName until ctx ends. Only root (the
// node agent's user) may connect.
func Serve(ctx context.Context, dir string) error {
	l, err := Listen(dir)
	if err != nil {
		return err
	}
	return ServeOn(ctx, l)
}

// Listen creates the helper's socket in dir (owner-only); ServeOn then answers on it.
func Listen(dir string) (*net.UnixListener, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, SocketName)
	_ = os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// ServeOn answers the node agent's requests on l until ctx ends, then closes l.
func ServeOn(ctx context.Context, l *net.UnixListener) error {
	path := l.Addr().String()
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	klog.InfoS("Network helper ready", "socket", path)
	for {
		conn, err := l.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go handle(conn)
	}
}

func handle(conn *net.UnixConn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	err := serveOne(conn)
	reply := podnetwork.Reply{}
	if err != nil {
		reply.Error = err.Error()
		klog.ErrorS(err, "Setting up a launcher's network failed")
	}
	data, _ := json.Marshal(reply)
	_, _ = conn.Write(data)
}

func serveOne(conn *net.UnixConn) error {
	if err := checkPeer(conn); err != nil {
		return err
	}
	msg, files, err := fdpass.Receive(conn)
	if err != nil {
		return err
	}
	defer fdpass.CloseAll(files)
	var req podnetwork.Request
	if err := json.Unmarshal(msg, &req); err != nil {
		return fmt.Errorf("malformed request: %w", err)
	}
	if req.Version != podnetwork.Version {
		return fmt.Errorf("request version %d; this helper speaks %d", req.Version, podnetwork.Version)
	}
	if len(files) < 1 || len(files) > 2 {
		return fmt.Errorf("a request carries the namespace and optionally /dev/net/tun, not %d descriptors", len(files))
	}
	var tun *os.File
	if len(files) == 2 {
		tun = files[1]
	}
	return netnssetup.Apply(files[0], tun, &req)
}

// checkPeer refuses a peer that is not root: the socket's mode already keeps others out.
func checkPeer(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return credErr
	}
	if cred.Uid != 0 {
		return fmt.Errorf("uid %d may not use the network helper", cred.Uid)
	}
	return nil
}

// Configure asks the helper listening in dir to set up the namespace ns (with tun, may be nil)
// for req, and waits for its answer.
func Configure(ctx context.Context, dir string, req *podnetwork.Request, ns, tun *os.File) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", filepath.Join(dir, SocketName))
	if err != nil {
		return fmt.Errorf("reaching the node's network helper: %w", err)
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	deadline := time.Now().Add(requestTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	msg, err := json.Marshal(req)
	if err != nil {
		return err
	}
	files := []*os.File{ns}
	if tun != nil {
		files = append(files, tun)
	}
	if err := fdpass.Send(conn, msg, files...); err != nil {
		return fmt.Errorf("sending the request to the network helper: %w", err)
	}
	var reply podnetwork.Reply
	if err := json.NewDecoder(conn).Decode(&reply); err != nil {
		return fmt.Errorf("reading the network helper's answer: %w", err)
	}
	if reply.Error != "" {
		return errors.New(reply.Error)
	}
	return nil
}
