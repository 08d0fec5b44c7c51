package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// command is the part of Kubernetes' e2e test image (registry.k8s.io/e2e-test-images/
// agnhost) that tests of Pods and Services use, so that the same test manifests run on local
// nodes and on a real cluster: netexec (an HTTP server answering /hostname, /echo, /clientip
// and /healthz), serve-hostname and connect.
func command() *cobra.Command {
	root := &cobra.Command{Use: "agnhost", Short: "Kubernetes' e2e test image, the subset tests use"}
	var httpPort, shPort int
	netexec := &cobra.Command{
		Use:   "netexec",
		Short: "Serve /hostname, /echo?msg=, /clientip and /healthz over HTTP",
		RunE: func(c *cobra.Command, _ []string) error {
			mux := http.NewServeMux()
			mux.HandleFunc("/hostname", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, hostname()) })
			mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Query().Get("msg")) })
			mux.HandleFunc("/clientip", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.RemoteAddr) })
			mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
			mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "NOW: "+time.Now().String()) })
			// Each request is logged, as agnhost's netexec does.
			logged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(c.OutOrStdout(), "%s %s\n", r.Method, r.URL.RequestURI())
				mux.ServeHTTP(w, r)
			})
			return serveUntilSignalled(c.Context(), httpPort, logged)
		},
	}
	netexec.Flags().IntVar(&httpPort, "http-port", 8080, "HTTP port.")
	serveHostname := &cobra.Command{
		Use:   "serve-hostname",
		Short: "Answer every HTTP request with the host name",
		RunE: func(c *cobra.Command, _ []string) error {
			return serveUntilSignalled(c.Context(), shPort, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, hostname()) }))
		},
	}
	serveHostname.Flags().IntVar(&shPort, "port", 9376, "HTTP port.")
	var timeout time.Duration
	connect := &cobra.Command{
		Use:   "connect HOST:PORT",
		Short: "Open a TCP connection; exit 0 on success, 1 on failure",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			conn, err := net.DialTimeout("tcp", args[0], timeout)
			if err != nil {
				return err
			}
			return conn.Close()
		},
	}
	connect.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "Give up after this long.")
	root.AddCommand(netexec, serveHostname, connect)
	return root
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// serveUntilSignalled serves HTTP on every address at port until SIGTERM or SIGINT.
func serveUntilSignalled(ctx context.Context, port int, h http.Handler) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv := &http.Server{Addr: ":" + strconv.Itoa(port), Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}
