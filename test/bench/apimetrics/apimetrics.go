// Package apimetrics reads the write counters of apiserver_request_total from kube-apiserver
// and from every vireo-apiserver replica, for the benchmarks to count the writes a workload
// caused.
package apimetrics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// RequestKey is one series of apiserver_request_total that is counted.
type RequestKey struct {
	Server      string // "vireo-apiserver" or "kube-apiserver"
	Resource    string
	Subresource string
	Verb        string
	Code        string
}

func (k RequestKey) String() string {
	r := k.Resource
	if k.Subresource != "" {
		r += "/" + k.Subresource
	}
	return fmt.Sprintf("%s %s %s (%s)", k.Server, k.Verb, r, k.Code)
}

// RequestCounts are cumulative request counters at one moment.
type RequestCounts map[RequestKey]float64

// WriteVerbs are the verbs that change an object, as apiserver_request_total names them (the
// HTTP method: POST is a create, PUT an update) and as the reports name them.
var WriteVerbs = map[string]string{"POST": "create", "PUT": "update", "PATCH": "patch", "APPLY": "apply", "DELETE": "delete"}

// Scraper reads apiserver_request_total from every vireo-apiserver replica (directly, as the
// admin, on each Pod's address: the aggregator does not proxy /metrics, and a service or Pod
// proxy request reaches vireo-apiserver unauthenticated) and from kube-apiserver.
type Scraper struct {
	Kube kubernetes.Interface
	// Config is the admin's configuration (client certificate), used to reach the
	// vireo-apiserver Pods directly.
	Config *rest.Config
	// Resources are the resources whose writes are counted, per server ("vireo-apiserver",
	// "kube-apiserver").
	Resources map[string]map[string]bool

	caBundle []byte // vireo-apiserver's serving CA
	method   string // how vireo-apiserver's metrics were reached, for the report
}

// Scrape returns the write counters of both servers now.
func (s *Scraper) Scrape(ctx context.Context) (RequestCounts, error) {
	out := RequestCounts{}
	data, err := s.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping kube-apiserver's /metrics: %w", err)
	}
	if err := ParseRequests(data, "kube-apiserver", s.Resources["kube-apiserver"], out); err != nil {
		return nil, err
	}
	byPod, err := s.VireoAPIServerMetrics(ctx)
	if err != nil {
		return nil, err
	}
	for _, data := range byPod {
		if err := ParseRequests(data, "vireo-apiserver", s.Resources["vireo-apiserver"], out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Method says how vireo-apiserver's metrics were reached, for the report (empty before the
// first successful scrape).
func (s *Scraper) Method() string { return s.method }

// VireoAPIServerMetrics returns the /metrics text of every vireo-apiserver Pod that has an
// address, by Pod name.
func (s *Scraper) VireoAPIServerMetrics(ctx context.Context) (map[string][]byte, error) {
	pods, err := s.Kube.CoreV1().Pods("vireo-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vireo-apiserver"})
	if err != nil {
		return nil, err
	}
	if len(pods.Items) == 0 {
		return nil, errors.New("no vireo-apiserver Pod to scrape")
	}
	out := map[string][]byte{}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" {
			continue
		}
		data, err := s.podMetrics(ctx, p.Status.PodIP)
		if err != nil {
			return nil, fmt.Errorf("scraping vireo-apiserver Pod %s: %w", p.Name, err)
		}
		out[p.Name] = data
	}
	return out, nil
}

// podMetrics GETs /metrics from one vireo-apiserver Pod with the admin's client certificate,
// verifying the serving certificate as kube-apiserver does: against its APIService's caBundle.
func (s *Scraper) podMetrics(ctx context.Context, ip string) ([]byte, error) {
	if s.caBundle == nil {
		data, err := s.Kube.CoreV1().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1.kubevirt.io").DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading APIService v1.kubevirt.io for its caBundle: %w", err)
		}
		var apiService struct {
			Spec struct {
				CABundle []byte `json:"caBundle"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(data, &apiService); err != nil || len(apiService.Spec.CABundle) == 0 {
			return nil, fmt.Errorf("APIService v1.kubevirt.io has no caBundle (%v)", err)
		}
		s.caBundle = apiService.Spec.CABundle
	}
	cfg := rest.CopyConfig(s.Config)
	cfg.Host = "https://" + net.JoinHostPort(ip, "8443")
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = s.caBundle, ""
	cfg.TLSClientConfig.ServerName = "vireo-apiserver.vireo-system.svc"
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	body, err := GetOK(ctx, hc, cfg.Host+"/metrics", "")
	if err != nil {
		return nil, err
	}
	s.method = "directly on each vireo-apiserver Pod's address (port 8443) with the admin's client certificate"
	return body, nil
}

// ParseRequests adds to out the write series of apiserver_request_total in a Prometheus text
// exposition of server whose resource is among resources.
func ParseRequests(data []byte, server string, resources map[string]bool, out RequestCounts) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		labelText, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		labels := parseLabels(labelText)
		verb, ok := WriteVerbs[strings.ToUpper(labels["verb"])]
		if !ok || !resources[labels["resource"]] {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", server, line, err)
		}
		out[RequestKey{Server: server, Resource: labels["resource"], Subresource: labels["subresource"], Verb: verb, Code: labels["code"]}] += v
	}
	return sc.Err()
}

// parseLabels parses `a="x",b="y"` (label values here never hold quotes or commas).
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if ok {
			out[strings.TrimSpace(k)] = strings.Trim(v, `"`)
		}
	}
	return out
}

// GetOK GETs url with hc (with a bearer token unless empty) and returns the body of a 200.
func GetOK(ctx context.Context, hc *http.Client, url, token string) ([]byte, error) {
	header := http.Header{}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	var body bytes.Buffer
	err := get(ctx, hc, url, header, "", &body)
	return body.Bytes(), err
}

// GetAs GETs url with hc asking for mediaType alone, and returns the body of a 200 answered in
// that media type.
func GetAs(ctx context.Context, hc *http.Client, url, mediaType string) ([]byte, error) {
	var body bytes.Buffer
	err := GetInto(ctx, hc, url, mediaType, &body)
	return body.Bytes(), err
}

// GetInto is GetAs reading the body into body (emptied first): a caller that reads large
// bodies again and again keeps one buffer, so that reading allocates nothing once it is large
// enough (a benchmark that times the reading then times no allocation or collection of its own).
func GetInto(ctx context.Context, hc *http.Client, url, mediaType string, body *bytes.Buffer) error {
	return get(ctx, hc, url, http.Header{"Accept": {mediaType}}, mediaType, body)
}

// get GETs url with header and reads the body of a 200, whose media type must be want
// unless want is empty, into body.
func get(ctx context.Context, hc *http.Client, url string, header http.Header, want string, body *bytes.Buffer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header = header
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body.Reset()
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %.200s", url, resp.StatusCode, body.Bytes())
	}
	if got, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); want != "" && got != want {
		return fmt.Errorf("GET %s: asked for %s, got %q", url, want, got)
	}
	return nil
}
