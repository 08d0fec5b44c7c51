package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/test/bench/apimetrics"
)

// The node agents' /metrics (port 8443) take only bearer tokens (Prometheus's ServiceAccount),
// authorized by kube-apiserver for get /metrics: the benchmark reads them as a ServiceAccount
// of its namespace bound to vireo:metrics-reader, like a monitoring stack would.
const (
	agentMetricsPort    = "8443"
	agentScraperAccount = "vmibench-scraper"
	metricsReaderRole   = "vireo:metrics-reader"
)

// arrivals are a node agent's cumulative figures of the migrations that arrived on its node
// (vireo_vmi_migration_*: from the target launchers' completed libvirt jobs).
type arrivals struct {
	Count                    float64
	DowntimeSum, TransferSum float64 // seconds
	ReceivedBytes            float64
}

// agentScraper reads the node agents' arrival figures.
type agentScraper struct {
	e     *env
	token string
	http  *http.Client
}

// newAgentScraper creates the scraping ServiceAccount, its binding and a token.
func newAgentScraper(ctx context.Context, e *env) (*agentScraper, error) {
	kube := e.cl.kube
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: agentScraperAccount}}
	if _, err := kube.CoreV1().ServiceAccounts(benchNS).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: benchNS + "-" + agentScraperAccount},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: agentScraperAccount, Namespace: benchNS}}}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	tr, err := kube.CoreV1().ServiceAccounts(benchNS).CreateToken(ctx, agentScraperAccount, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token for %s: %w", agentScraperAccount, err)
	}
	// The agents' metrics certificate is self-signed: the token is the secret here, and it
	// goes only to the Pod addresses of the installation's own network namespace.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return &agentScraper{e: e, token: tr.Status.Token, http: hc}, nil
}

// scrape returns every node's arrival figures now, by node name.
func (s *agentScraper) scrape(ctx context.Context) (map[string]arrivals, error) {
	pods, err := s.e.cl.kube.CoreV1().Pods("vireo-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vireo-nodeagent"})
	if err != nil {
		return nil, err
	}
	out := map[string]arrivals{}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" {
			return nil, fmt.Errorf("node agent Pod %s has no address", p.Name)
		}
		body, err := apimetrics.GetOK(ctx, s.http, "https://"+net.JoinHostPort(p.Status.PodIP, agentMetricsPort)+"/metrics", s.token)
		if err != nil {
			return nil, fmt.Errorf("node agent of %s: %w", p.Spec.NodeName, err)
		}
		a, err := parseArrivals(body)
		if err != nil {
			return nil, fmt.Errorf("node agent of %s: %w", p.Spec.NodeName, err)
		}
		out[p.Spec.NodeName] = a
	}
	return out, nil
}

// parseArrivals reads the arrival series from a Prometheus text exposition (absent series:
// nothing arrived yet).
func parseArrivals(data []byte) (arrivals, error) {
	var a arrivals
	fields := map[string]*float64{
		"vireo_vmi_migration_downtime_seconds_count": &a.Count,
		"vireo_vmi_migration_downtime_seconds_sum":   &a.DowntimeSum,
		"vireo_vmi_migration_transfer_seconds_sum":   &a.TransferSum,
		"vireo_vmi_migration_received_bytes_total":   &a.ReceivedBytes,
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		dst, want := fields[name]
		if !ok || !want {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			return a, fmt.Errorf("%s: %w", sc.Text(), err)
		}
		*dst = v
	}
	return a, sc.Err()
}
