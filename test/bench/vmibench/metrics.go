package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// requestKey is one series of apiserver_request_total that the benchmark counts.
type requestKey struct {
	Server      string // "vireo-apiserver" or "kube-apiserver"
	Resource    string
	Subresource string
	Verb        string
	Code        string
}

func (k requestKey) String() string {
	r := k.Resource
	if k.Subresource != "" {
		r += "/" + k.Subresource
	}
	return fmt.Sprintf("%s %s %s (%s)", k.Server, k.Verb, r, k.Code)
}

// requestCounts are cumulative request counters at one moment.
type requestCounts map[requestKey]float64

// writeVerbs are the verbs that change an object, as apiserver_request_total names them (the
// HTTP method: POST is a create, PUT an update) and as the report names them.
var writeVerbs = map[string]string{"POST": "create", "PUT": "update", "PATCH": "patch", "APPLY": "apply", "DELETE": "delete"}

// countedResources are the resources whose writes the benchmark counts, per server.
var countedResources = map[string]map[string]bool{
	"vireo-apiserver": {"virtualmachineinstances": true},
	"kube-apiserver":  {"pods": true},
}

// scraper reads apiserver_request_total from every vireo-apiserver replica (directly, as the
// admin, on each Pod's address: the aggregator does not proxy /metrics, and a service or Pod
// proxy request reaches vireo-apiserver unauthenticated) and from kube-apiserver.
type scraper struct {
	cl       *clients
	caBundle []byte // vireo-apiserver's serving CA
	method   string // how vireo-apiserver's metrics were reached, for the report
}

// scrape returns the write counters of both servers now.
func (s *scraper) scrape(ctx context.Context) (requestCounts, error) {
	out := requestCounts{}
	data, err := s.cl.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping kube-apiserver's /metrics: %w", err)
	}
	if err := parseRequests(data, "kube-apiserver", out); err != nil {
		return nil, err
	}
	pods, err := s.cl.kube.CoreV1().Pods("vireo-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vireo-apiserver"})
	if err != nil {
		return nil, err
	}
	if len(pods.Items) == 0 {
		return nil, errors.New("no vireo-apiserver Pod to scrape")
	}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" {
			continue
		}
		data, err := s.podMetrics(ctx, p.Status.PodIP)
		if err != nil {
			return nil, fmt.Errorf("scraping vireo-apiserver Pod %s: %w", p.Name, err)
		}
		if err := parseRequests(data, "vireo-apiserver", out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// podMetrics GETs /metrics from one vireo-apiserver Pod with the admin's client certificate,
// verifying the serving certificate as kube-apiserver does: against its APIService's caBundle.
func (s *scraper) podMetrics(ctx context.Context, ip string) ([]byte, error) {
	if s.caBundle == nil {
		data, err := s.cl.kube.CoreV1().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1.kubevirt.io").DoRaw(ctx)
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
	cfg := rest.CopyConfig(s.cl.cfg)
	cfg.Host = "https://" + net.JoinHostPort(ip, "8443")
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = s.caBundle, ""
	cfg.TLSClientConfig.ServerName = "vireo-apiserver.vireo-system.svc"
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	body, err := getOK(ctx, hc, cfg.Host+"/metrics", "")
	if err != nil {
		return nil, err
	}
	s.method = "directly on each vireo-apiserver Pod's address (port 8443) with the admin's client certificate"
	return body, nil
}

// parseRequests adds the write series of apiserver_request_total in a Prometheus text
// exposition to out.
func parseRequests(data []byte, server string, out requestCounts) error {
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
		verb, ok := writeVerbs[strings.ToUpper(labels["verb"])]
		if !ok || !countedResources[server][labels["resource"]] {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", server, line, err)
		}
		out[requestKey{Server: server, Resource: labels["resource"], Subresource: labels["subresource"], Verb: verb, Code: labels["code"]}] += v
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

// writes are the write requests between two scrapes.
type writes struct {
	// VMI counts writes to virtualmachineinstances (any subresource) on vireo-apiserver.
	VMI float64 `json:"vmiWrites"`
	// VMIPerVMI is VMI divided by the number of VMIs.
	VMIPerVMI float64 `json:"vmiWritesPerVMI"`
	// ByVireoPerVMI excludes the benchmark's own create and delete requests.
	ByVireoPerVMI float64 `json:"vmiWritesByVireoPerVMI"`
	// Conflicts are writes answered 409 (wasted).
	Conflicts float64 `json:"vmiConflicts"`
	// PodWritesPerVMI are writes to Pods (any subresource) on kube-apiserver per VMI.
	PodWritesPerVMI float64 `json:"podWritesPerVMI"`
	// Series lists every changed series ("server VERB resource/subresource (code)": count).
	Series map[string]float64 `json:"series"`
}

// delta returns the writes between before and after for n VMIs; ownCreates and ownDeletes are
// the benchmark's own requests among them.
func delta(before, after requestCounts, n int, ownCreates, ownDeletes float64) writes {
	w := writes{Series: map[string]float64{}}
	keys := make([]requestKey, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var pods float64
	for _, k := range keys {
		d := after[k] - before[k]
		if d == 0 {
			continue
		}
		w.Series[k.String()] = d
		switch k.Server {
		case "vireo-apiserver":
			w.VMI += d
			if k.Code == "409" {
				w.Conflicts += d
			}
		case "kube-apiserver":
			pods += d
		}
	}
	w.VMIPerVMI = w.VMI / float64(n)
	w.ByVireoPerVMI = (w.VMI - ownCreates - ownDeletes) / float64(n)
	w.PodWritesPerVMI = pods / float64(n)
	return w
}

// getOK GETs url with hc (with a bearer token unless empty) and returns the body of a 200.
func getOK(ctx context.Context, hc *http.Client, url, token string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %.200s", url, resp.StatusCode, body)
	}
	return body, nil
}
