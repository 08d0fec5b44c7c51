// Package embeddedetcd runs a single-member etcd inside vireo-apiserver, so that a
// Vireo installation needs no external etcd cluster for development and small setups.
package embeddedetcd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Server is a running embedded etcd member.
type Server struct {
	etcd *embed.Etcd
	// ClientURL is the endpoint clients use: a unix socket inside the data directory,
	// so the unauthenticated etcd port is reachable only through the filesystem.
	ClientURL string
	// socketDir is the fallback socket directory, removed on Close; empty when the
	// sockets are in the data directory.
	socketDir string
	// closing is set when Close begins, so the logger knows closed-listener errors are expected.
	closing *atomic.Bool
}

// Start launches etcd with its data under dataDir and returns once it serves requests
// or ctx ends. Data written by an earlier Start with the same dataDir is kept.
func Start(ctx context.Context, dataDir string) (*Server, error) {
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: resolving data directory %q: %w", dataDir, err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded etcd: creating data directory %q: %w", dataDir, err)
	}
	sockets := socketDir(dataDir)
	if sockets != dataDir {
		if err := ensurePrivateDir(sockets); err != nil {
			return nil, fmt.Errorf("embedded etcd: the data directory's path is too long for a unix socket, so the sockets go to another directory: %w", err)
		}
	}
	clientURL := clientURL(dataDir)
	peerURL := url.URL{Scheme: "unix", Path: filepath.Join(sockets, "etcd-peer.sock")}

	cfg := embed.NewConfig()
	cfg.Name = "vireo"
	cfg.Dir = filepath.Join(dataDir, "etcd")
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// etcd logs through klog (see klogCore), quietly unless something is wrong.
	logger, closing := newLogger()
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	// Keep the database small on long-running development installations.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: starting in %q: %w", cfg.Dir, err)
	}
	srv := &Server{etcd: e, ClientURL: clientURL.String(), closing: closing}
	if sockets != dataDir {
		srv.socketDir = sockets
	}
	select {
	case <-e.Server.ReadyNotify():
		return srv, nil
	case err := <-e.Err():
		srv.Close()
		return nil, fmt.Errorf("embedded etcd: failed while starting: %w", err)
	case <-time.After(60 * time.Second):
		srv.Close()
		return nil, fmt.Errorf("embedded etcd: not ready after 60s (data directory %q)", cfg.Dir)
	case <-ctx.Done():
		srv.Close()
		return nil, ctx.Err()
	}
}

// ClientURL is the endpoint of the embedded etcd whose data is in dataDir.
func ClientURL(dataDir string) (string, error) {
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return "", err
	}
	u := clientURL(dataDir)
	return u.String(), nil
}

func clientURL(absDataDir string) url.URL {
	return url.URL{Scheme: "unix", Path: filepath.Join(socketDir(absDataDir), "etcd-client.sock")}
}

// socketDir is where the sockets live: the data directory, or, when its path is too long
// for a unix socket (108 bytes on Linux), a directory under the system's temporary
// directory named after a hash of it, so the endpoint still follows from the data
// directory. That directory is shared with other users, so Start accepts it only if it
// is private (see ensurePrivateDir).
func socketDir(absDataDir string) string {
	if len(absDataDir) <= 80 {
		return absDataDir
	}
	sum := sha256.Sum256([]byte(absDataDir))
	return filepath.Join(os.TempDir(), "vireo-etcd-"+hex.EncodeToString(sum[:6]))
}

// Err reports a fatal error of the running member.
func (s *Server) Err() <-chan error { return s.etcd.Err() }

// Close stops the member, waits until its files are released and removes the fallback
// socket directory, so the next Start creates it afresh.
func (s *Server) Close() {
	s.closing.Store(true)
	s.etcd.Close()
	if s.socketDir != "" {
		_ = os.RemoveAll(s.socketDir)
	}
}
