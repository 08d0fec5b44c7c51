package importer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/vireo-dev/vireo/importer/importerapi"
)

// progressGauge holds the last progress; unknown until the source's size is known.
type progressGauge struct {
	mu      sync.Mutex
	percent float64
	known   bool
}

func (g *progressGauge) set(received, total int64) {
	if total < 0 {
		return
	}
	pct := 100.0
	if total > 0 {
		// Rounded down, as FormatProgress does: 100.00 only once everything arrived.
		pct = math.Floor(float64(received)*10000/float64(total)) / 100
	}
	g.mu.Lock()
	g.percent, g.known = min(pct, 100), true
	g.mu.Unlock()
}

// ServeHTTP writes the gauge in Prometheus' text format, labelled with the owner's UID.
func (g *progressGauge) serve(ownerUID string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		g.mu.Lock()
		pct, known := g.percent, g.known
		g.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# HELP %s The import's progress in percent.\n# TYPE %s gauge\n", importerapi.ProgressMetric, importerapi.ProgressMetric)
		if known {
			fmt.Fprintf(w, "%s{ownerUID=%s} %s\n", importerapi.ProgressMetric, strconv.Quote(ownerUID), strconv.FormatFloat(pct, 'f', 2, 64))
		}
	})
}

// serveProgress serves the gauge at addr under /metrics until ctx ends.
func serveProgress(ctx context.Context, addr, ownerUID string, g *progressGauge) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--progress-address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", g.serve(ownerUID))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = l.Close()
		}
	}()
	return nil
}
