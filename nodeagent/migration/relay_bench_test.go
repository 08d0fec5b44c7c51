package migration

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/nodeagent/relay"
)

// BenchmarkMigrationRelay streams through both agents' relays as a migration between nodes
// does: a unix socket (the source QEMU's stream) -> the source agent's splice -> TLS over
// loopback TCP -> the target agent's server (read-ahead, record coalescing) -> a unix socket
// (the target QEMU). It reports throughput and the process's CPU time per GiB, both ends of the
// unix sockets included.
func BenchmarkMigrationRelay(b *testing.B) {
	dir := b.TempDir()
	sinkPath := filepath.Join(dir, "target")
	sink, err := net.Listen("unix", sinkPath)
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	received := make(chan int64, 1)
	go func() {
		c, err := sink.Accept()
		if err != nil {
			return
		}
		n, _ := io.CopyBuffer(io.Discard, struct{ io.Reader }{c}, make([]byte, relay.SpliceBuffer))
		received <- n
		c.Close()
	}()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, err := net.Dial("unix", sinkPath)
		if err != nil {
			b.Error(err)
			return
		}
		relayPeer(w, target)
	}))
	srv.Listener = ReadAheadListener{srv.Listener}
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.ServerName, cfg.DynamicRecordSizingDisabled = "example.com", true
	peer, err := (&PeerTLS{client: cfg}).dialPeer(b.Context(), srv.Listener.Addr().String(), "uid", "socket")
	if err != nil {
		b.Fatal(err)
	}
	sourcePath := filepath.Join(dir, "source")
	source, err := net.Listen("unix", sourcePath)
	if err != nil {
		b.Fatal(err)
	}
	defer source.Close()
	go func() {
		if c, err := source.Accept(); err == nil {
			relay.Splice(c, peer)
		}
	}()
	qemu, err := net.Dial("unix", sourcePath)
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 32<<10) // QEMU's migration stream buffer
	b.SetBytes(int64(len(chunk)))
	cpu0 := processCPU()
	b.ResetTimer()
	for range b.N {
		if _, err := qemu.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	_ = qemu.(*net.UnixConn).CloseWrite()
	n := <-received
	b.StopTimer()
	if n != int64(b.N*len(chunk)) {
		b.Fatalf("%d bytes arrived, %d sent", n, b.N*len(chunk))
	}
	b.ReportMetric((processCPU()-cpu0).Seconds()/(float64(n)/(1<<30)), "CPU-s/GiB")
}

// processCPU is the CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
