package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/localcluster"
)

// streamSubprotocol is KubeVirt's websocket subprotocol for console and VNC.
const streamSubprotocol = v1.PlainStreamProtocolName

// nodeAgentPort is the node agents' HTTPS port (artifacts/base).
var nodeAgentPort = strconv.Itoa(nodeagentapi.Port)

// streamRoute is one way to a VMI's console and VNC: through kube-apiserver's aggregation as
// a user does, or straight to the node agent as vireo-apiserver does.
type streamRoute struct {
	name   string
	base   string // wss://host:port and the path up to the VMI's name
	tls    *tls.Config
	header http.Header
}

// aggregatedRoute reaches VMI ns/name through kube-apiserver at KubeVirt's subresources path.
func aggregatedRoute(cfg *rest.Config, ns, name string) (streamRoute, error) {
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return streamRoute{}, err
	}
	header := http.Header{}
	if cfg.BearerToken != "" {
		header.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	return streamRoute{name: "aggregated", tls: tlsCfg, header: header,
		base: "wss" + strings.TrimPrefix(cfg.Host, "https") + "/apis/subresources.kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances/" + name}, nil
}

// directRoute reaches VMI ns/name on node at its node agent, with vireo-apiserver's client
// certificate for the node agents.
func directRoute(ctx context.Context, e *env, node, ns, name string) (streamRoute, error) {
	pods, err := e.cl.kube.CoreV1().Pods("vireo-system").List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=vireo-nodeagent", FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return streamRoute{}, err
	}
	if len(pods.Items) != 1 || pods.Items[0].Status.PodIP == "" {
		return streamRoute{}, fmt.Errorf("no node agent Pod with an address on %s", node)
	}
	certs := filepath.Dir(e.cluster.VireoCAFile())
	caPEM, err := os.ReadFile(e.cluster.VireoCAFile())
	if err != nil {
		return streamRoute{}, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return streamRoute{}, fmt.Errorf("%s holds no certificate", e.cluster.VireoCAFile())
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "nodeagent-client.crt"), filepath.Join(certs, "nodeagent-client.key"))
	if err != nil {
		return streamRoute{}, err
	}
	return streamRoute{name: "direct", header: http.Header{},
		tls:  &tls.Config{RootCAs: roots, ServerName: localcluster.NodeAgentServerName, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13},
		base: "wss://" + net.JoinHostPort(pods.Items[0].Status.PodIP, nodeAgentPort) + "/v1/namespaces/" + ns + "/virtualmachineinstances/" + name}, nil
}

// dial opens the console or vnc stream. With cache, TLS sessions are resumed from it (a
// client's later sessions); without, every dial makes a full handshake (a client's first).
func (r streamRoute) dial(ctx context.Context, kind string, cache tls.ClientSessionCache) (*wsStream, error) {
	tlsCfg := r.tls.Clone()
	tlsCfg.ClientSessionCache = cache
	d := websocket.Dialer{TLSClientConfig: tlsCfg, Subprotocols: []string{streamSubprotocol}, HandshakeTimeout: 30 * time.Second,
		ReadBufferSize: 64 << 10, WriteBufferSize: 16 << 10}
	ws, resp, err := d.DialContext(ctx, r.base+"/"+kind, r.header)
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return nil, fmt.Errorf("%s %s: %w: HTTP %d: %s", r.name, kind, err, resp.StatusCode, body)
		}
		return nil, fmt.Errorf("%s %s: %w", r.name, kind, err)
	}
	return &wsStream{ws: ws}, nil
}

// wsStream reads and writes a stream's binary messages as a byte stream.
type wsStream struct {
	ws  *websocket.Conn
	cur io.Reader
}

func (s *wsStream) Read(p []byte) (int, error) {
	for {
		if s.cur == nil {
			typ, r, err := s.ws.NextReader()
			if err != nil {
				return 0, err
			}
			if typ != websocket.BinaryMessage {
				continue
			}
			s.cur = r
		}
		n, err := s.cur.Read(p)
		if errors.Is(err, io.EOF) {
			s.cur = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (s *wsStream) Write(p []byte) (int, error) {
	if err := s.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *wsStream) Close() error { return s.ws.Close() }

// setDeadline bounds the stream's next reads and writes.
func (s *wsStream) setDeadline(t time.Time) {
	_ = s.ws.SetReadDeadline(t)
	_ = s.ws.SetWriteDeadline(t)
}

// readUntil reads until the output since the call contains want and returns the bytes read.
func (s *wsStream) readUntil(want string, deadline time.Time) (int, error) {
	s.setDeadline(deadline)
	buf := make([]byte, 64<<10)
	var tail []byte
	total := 0
	for {
		n, err := s.Read(buf)
		total += n
		tail = append(tail, buf[:n]...)
		if strings.Contains(string(tail), want) {
			return total, nil
		}
		if len(tail) > len(want) {
			tail = tail[len(tail)-len(want):]
		}
		if err != nil {
			return total, fmt.Errorf("waiting for %q: %w", want, err)
		}
	}
}
