package nodeagent

import (
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/internal/certpool"
	"github.com/vireo-dev/vireo/nodeagent/migration"
)

// server is the node agent's HTTPS endpoint for vireo-apiserver. It accepts only clients with a
// certificate from the configured CA whose common name is vireo-apiserver's. It serves a health
// check and the console and VNC streams; actions and migrations arrive on it later.
type server struct {
	http *http.Server
	addr string
	cert string
	key  string
}

// newServer builds the server; register adds the agent's endpoints (nil: health check only).
func newServer(o *Options, peers *migration.PeerTLS, register func(*http.ServeMux)) (*server, error) {
	pool, err := certpool.FromFile(o.ClientCAFile)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	if register != nil {
		register(mux)
	}
	tlsCfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs:  pool,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) > 0 && (cs.PeerCertificates[0].Subject.CommonName == o.ClientName ||
				peers != nil && cs.PeerCertificates[0].Subject.CommonName == peers.Name()) {
				return nil
			}
			return fmt.Errorf("client certificate is neither %s's nor a node agent's", o.ClientName)
		},
	}
	return &server{addr: o.Listen, cert: o.TLSCertFile, key: o.TLSKeyFile, http: &http.Server{
		Addr: o.Listen, Handler: peers.Guard(mux), TLSConfig: tlsCfg, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(probeFilter{}, "", 0),
	}}, nil
}

// probeFilter logs the HTTPS server's errors but for the handshakes a TCP readiness probe
// abandons (connect, then close), which would fill the log every few seconds.
type probeFilter struct{}

func (probeFilter) Write(p []byte) (int, error) {
	line := string(p)
	if !strings.Contains(line, "TLS handshake error") || !strings.HasSuffix(strings.TrimSpace(line), "EOF") {
		klog.InfoS("Node agent HTTPS server", "error", strings.TrimSpace(line))
	}
	return len(p), nil
}

// run serves until ctx ends.
func (s *server) run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("node agent HTTPS server: %w", err)
	}
	errc := make(chan error, 1)
	go func() {
		err := s.http.ServeTLS(migration.ReadAheadListener{Listener: ln}, s.cert, s.key)
		ln.Close() // ServeTLS leaves it open when it could not load the certificate
		errc <- err
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("node agent HTTPS server: %w", err)
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return s.http.Shutdown(shutdownCtx)
	}
}
