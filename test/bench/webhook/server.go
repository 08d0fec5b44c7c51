// Package webhook is KubeVirt's admission architecture for the aggregation benchmark: an HTTPS
// server answering kube-apiserver's mutating and validating admission webhooks for
// VirtualMachineInstance custom resources, with Vireo's defaulting and validation, so a CRD can
// be measured doing the same work Vireo's aggregated API server does in process.
package webhook

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

// Paths of the webhooks, after KubeVirt's virt-api.
const (
	MutatePath         = "/virtualmachineinstances-mutate"
	ValidateCreatePath = "/virtualmachineinstances-validate-create"
	ValidateUpdatePath = "/virtualmachineinstances-validate-update"
)

// maxBody bounds an admission review (kube-apiserver's own request limit is 3 MiB).
const maxBody = 3 << 20

// Server serves the webhooks over HTTPS.
type Server struct {
	srv      *http.Server
	addr     string
	admitter *Admitter
	mutates  atomic.Int64
	validate atomic.Int64
	done     chan error
}

// Start listens on addr (such as 127.0.0.1:0) with the certificate and key files and serves
// until Close.
func Start(addr, certFile, keyFile string) (*Server, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the webhook's serving certificate: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{addr: ln.Addr().String(), admitter: NewAdmitter(), done: make(chan error, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+MutatePath, s.handle(s.admitter.Mutate, &s.mutates))
	mux.HandleFunc("POST "+ValidateCreatePath, s.handle(s.admitter.Validate, &s.validate))
	mux.HandleFunc("POST "+ValidateUpdatePath, s.handle(s.admitter.Validate, &s.validate))
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}},
	}
	go func() { s.done <- s.srv.ServeTLS(ln, "", "") }()
	return s, nil
}

// URL is the base URL of the server, https://<host>:<port>.
func (s *Server) URL() string { return "https://" + s.addr }

// Calls reports how many mutating and validating reviews the server has answered.
func (s *Server) Calls() (mutating, validating int64) { return s.mutates.Load(), s.validate.Load() }

// Close stops the server, waiting briefly for reviews in flight.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	return err
}

// handle decodes an AdmissionReview, asks decide for the response and writes the review back.
func (s *Server) handle(decide func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse, calls *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("expected an admission.k8s.io/v1 AdmissionReview with a request: %v", err), http.StatusBadRequest)
			return
		}
		calls.Add(1)
		out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: decide(review.Request)}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&out)
	}
}
