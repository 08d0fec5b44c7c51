package migration

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/certpool"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/relay"
)

// Between nodes, a migration's connections go from the source's agent to the target's over
// mutual TLS: each agent presents its own serving certificate (issued for server and client
// use), and an agent accepts as a peer only a client whose certificate has the same common
// name as its own, from the CA it trusts for vireo-apiserver. A peer may use the migration
// endpoint only; vireo-apiserver's certificate may use everything but it.

// migrationUpgrade is the protocol a migration connection upgrades to.
const migrationUpgrade = "vireo-migration"

// PeerTLS is the node agents' TLS between each other.
type PeerTLS struct {
	// name is the common name (and first DNS name) of the agents' certificate.
	name   string
	client *tls.Config
}

// LoadPeerTLS reads the agent's certificate (certFile, keyFile: its serving pair) and the CA
// of its peers (caFile: the one it trusts for vireo-apiserver).
func LoadPeerTLS(certFile, keyFile, caFile string) (*PeerTLS, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err
	}
	pool, err := certpool.FromFile(caFile)
	if err != nil {
		return nil, err
	}
	name := leaf.Subject.CommonName
	if len(leaf.DNSNames) > 0 {
		name = leaf.DNSNames[0]
	}
	// Full records from the first byte (crypto/tls otherwise starts a connection with small
	// ones), so that the receiving agent can relay them together (recordCoalescer).
	return &PeerTLS{name: leaf.Subject.CommonName, client: &tls.Config{
		MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: name,
		DynamicRecordSizingDisabled: true,
	}}, nil
}

// Name is the common name of the node agents' certificate ("" without PeerTLS).
func (p *PeerTLS) Name() string {
	if p == nil {
		return ""
	}
	return p.name
}

// FromPeer reports whether r came from another node agent.
func (p *PeerTLS) FromPeer(r *http.Request) bool {
	return p != nil && r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && r.TLS.PeerCertificates[0].Subject.CommonName == p.name
}

// Guard confines peers to the migration endpoint and keeps everyone else off it.
func (p *PeerTLS) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.FromPeer(r) != strings.HasPrefix(r.URL.Path, nodeagentapi.MigrationPath) && r.URL.Path != "/healthz" {
			http.Error(w, "forbidden for this client certificate", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Register adds the migration endpoint: GET /v1/migrations/{uid}/{socket} with Upgrade:
// vireo-migration connects the peer to socket of the target launcher of migration uid on this
// node.
func (m *Manager) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+nodeagentapi.MigrationPath+"{uid}/{socket}", m.serveMigrationSocket)
}

func (m *Manager) serveMigrationSocket(w http.ResponseWriter, r *http.Request) {
	uid, sock := r.PathValue("uid"), r.PathValue("socket")
	switch {
	case !m.peers.FromPeer(r):
		http.Error(w, "only node agents may connect to a migration", http.StatusForbidden)
		return
	case !slices.Contains(protocol.MigrationSockets, sock):
		http.Error(w, fmt.Sprintf("no migration socket %q", sock), http.StatusNotFound)
		return
	case !strings.EqualFold(r.Header.Get("Upgrade"), migrationUpgrade):
		http.Error(w, "upgrade to "+migrationUpgrade+" required", http.StatusBadRequest)
		return
	}
	pod := m.migrationTarget(uid)
	if pod == nil {
		http.Error(w, fmt.Sprintf("no running target launcher of migration %s on node %s", uid, m.node), http.StatusNotFound)
		return
	}
	target, err := m.dirs.DialSocket(r.Context(), pod.UID, sock)
	if err != nil {
		http.Error(w, fmt.Sprintf("the target launcher's %s is not reachable: %v", sock, err), http.StatusServiceUnavailable)
		return
	}
	klog.V(2).InfoS("Migration connection from a peer", "migration", uid, "socket", sock, "peer", r.RemoteAddr)
	relayPeer(w, target)
}

// relayPeer switches a peer's request on w to the migration protocol and relays the connection
// with target (which it closes) until both directions ended: the connection's buffers capped,
// read ahead, its records read together.
func relayPeer(w http.ResponseWriter, target net.Conn) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		target.Close()
		return
	}
	_, err = io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: "+migrationUpgrade+"\r\nConnection: Upgrade\r\n\r\n")
	if err != nil {
		conn.Close()
		target.Close()
		return
	}
	capConnBuffers(conn)
	relay.Splice(&relay.BufferedConn{Conn: conn, R: coalesceRecords(conn, buf.Reader)}, target)
}

// migrationTarget is the running target launcher Pod of migration uid on this node.
func (m *Manager) migrationTarget(uid string) *corev1.Pod {
	pods, err := m.pods.List(labels.SelectorFromSet(labels.Set{v1.MigrationJobLabel: uid}))
	if err != nil {
		return nil
	}
	for _, p := range pods {
		if p.Spec.NodeName == m.node && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p
		}
	}
	return nil
}

// dialPeer connects to socket name of migration uid's target through the agent at address.
func (p *PeerTLS) dialPeer(ctx context.Context, address, uid, name string) (net.Conn, error) {
	if p == nil {
		return nil, errors.New("this node agent has no certificate for its peers")
	}
	d := net.Dialer{KeepAlive: 15 * time.Second, Control: capSocketBuffers}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // connection and TLS handshake
	defer cancel()
	tcp, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, fmt.Errorf("reaching the target's node agent at %s: %w", address, err)
	}
	raw := &batchingConn{Conn: tcp}
	c := tls.Client(raw, p.client)
	if err := c.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("TLS with the target's node agent at %s: %w", address, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+address+nodeagentapi.MigrationPath+uid+"/"+name, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", migrationUpgrade)
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("the target's node agent at %s: %w", address, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		c.Close()
		return nil, fmt.Errorf("the target's node agent at %s: %s: %s", address, resp.Status, strings.TrimSpace(string(body)))
	}
	return &peerConn{BufferedConn: relay.BufferedConn{Conn: c, R: br}, raw: raw}, nil
}

// migrationSocketBuffer caps the kernel's send and receive buffers of a migration connection
// between node agents (the kernel holds it to net.core.wmem_max and rmem_max, then doubles it
// for its bookkeeping). Left to autotuning they grew to several MB when the receiving side fell
// behind, as it does on a busy node; QEMU counts bytes in them as sent, so at the switch-over
// the guest stayed paused while that backlog crossed, and the target's QEMU, busy draining it,
// answered the copied disk's last requests late. Measured with vmibench on 2 cores: downtime
// p50 between nodes 330-350 ms uncapped, 130-200 ms capped at 256 KiB or 1 MiB; 1 MiB leaves
// more room for a receiver that is scheduled late.
const migrationSocketBuffer = 1 << 20

// capSocketBuffers is a net.Dialer Control that caps a migration connection's buffers before
// it connects. Like capConnBuffers it is a tuning: a socket that refuses it still migrates.
func capSocketBuffers(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, migrationSocketBuffer)
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, migrationSocketBuffer)
	})
}

// capConnBuffers caps the buffers of an accepted migration connection (TLS over TCP).
func capConnBuffers(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if ahead, ok := c.(*readAheadConn); ok {
		c = ahead.Conn
	}
	if raw, ok := c.(*net.TCPConn); ok {
		_ = raw.SetReadBuffer(migrationSocketBuffer)
		_ = raw.SetWriteBuffer(migrationSocketBuffer)
	}
}
