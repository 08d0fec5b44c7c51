package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/test/bench/apimetrics"
	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

// usage is what the servers hold at one moment.
type usage struct {
	// Memory by process: vireo-apiserver (with its embedded etcd), vireo-controller,
	// kube-apiserver and the cluster's etcd; RSS split into anonymous memory and mapped file
	// pages (the embedded etcd's database), which the kernel reclaims under pressure.
	Memory map[string]hostproc.Memory `json:"memory"`
	// CPUTicks by process, cumulative (hostproc.ClockTicks a second).
	CPUTicks map[string]int64 `json:"cpuTicks"`
	// DB is each etcd's database file: "vireo" (vireo-apiserver's) and "cluster".
	DB map[string]int64 `json:"etcdDatabaseBytes"`
	// HostBusy and HostTotal are the machine's CPU ticks, cumulative (/proc/stat).
	HostBusy  int64 `json:"hostBusyTicks"`
	HostTotal int64 `json:"hostTotalTicks"`
}

// pids finds the processes measured: the Pods' on the local node by executable name, the host
// components by their pid files.
func pids(cluster *localcluster.Cluster) (map[string]int, error) {
	out := map[string]int{}
	for _, pid := range cluster.PodProcesses(cluster.NodeNames()[0]) {
		p, err := hostproc.Read(pid)
		if err != nil {
			continue
		}
		if n := p.Name(); n == "vireo-apiserver" || n == "vireo-controller" {
			out[n] = pid
		}
	}
	for _, name := range []string{"kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager"} {
		comp, err := cluster.Component(name)
		if err != nil {
			return nil, err
		}
		if pid, ok := comp.PID(); ok {
			out[name] = pid
		}
	}
	// vireo-controller is not required: the direct waves run without it (directWave).
	for _, want := range []string{"vireo-apiserver", "kube-apiserver", "etcd"} {
		if _, ok := out[want]; !ok {
			return nil, fmt.Errorf("no %s process of the installation found", want)
		}
	}
	return out, nil
}

// measureUsage reads the processes' memory and CPU and the databases' sizes.
func measureUsage(cluster *localcluster.Cluster) (usage, error) {
	procs, err := pids(cluster)
	if err != nil {
		return usage{}, err
	}
	u := usage{Memory: map[string]hostproc.Memory{}, CPUTicks: map[string]int64{}, DB: map[string]int64{}}
	for name, pid := range procs {
		m, err := hostproc.ReadMemory(pid)
		if err != nil {
			return usage{}, fmt.Errorf("reading %s's memory: %w", name, err)
		}
		ticks, err := hostproc.CPUTicks(pid)
		if err != nil {
			return usage{}, fmt.Errorf("reading %s's CPU time: %w", name, err)
		}
		u.Memory[name], u.CPUTicks[name] = m, ticks
	}
	self, err := hostproc.CPUTicks(os.Getpid())
	if err != nil {
		return usage{}, err
	}
	u.CPUTicks["scalebench (the simulation)"] = self
	if u.HostBusy, u.HostTotal, err = hostproc.HostCPU(); err != nil {
		return usage{}, err
	}
	dbs := map[string]string{
		"vireo":   filepath.Join(cluster.APIServerDataDir(), "etcd", "member", "snap", "db"),
		"cluster": filepath.Join(cluster.Options().Data("etcd"), "member", "snap", "db"),
	}
	for name, path := range dbs {
		st, err := os.Stat(path)
		if err != nil {
			return usage{}, fmt.Errorf("the %s etcd's database: %w", name, err)
		}
		u.DB[name] = st.Size()
	}
	return u, nil
}

// cpuShares is each process's CPU over a wave (between two usages), in cores, and the
// machine's busy share (1: every core busy).
func cpuShares(before, after usage, wall time.Duration) (map[string]float64, float64) {
	out := map[string]float64{}
	for name, t := range after.CPUTicks {
		out[name] = float64(t-before.CPUTicks[name]) / hostproc.ClockTicks / wall.Seconds()
	}
	busy := 0.0
	if total := after.HostTotal - before.HostTotal; total > 0 {
		busy = float64(after.HostBusy-before.HostBusy) / float64(total)
	}
	return out, busy
}

// cpuPerVMI is the CPU cores spent over wall per VMI (ms), and the VMIs per second this
// machine's cores could take at that cost.
func cpuPerVMI(cores map[string]float64, wall time.Duration, vmis int) (ms, rate float64) {
	total := 0.0
	for _, c := range cores {
		total += c
	}
	if vmis == 0 || total == 0 {
		return 0, 0
	}
	perVMI := total * wall.Seconds() / float64(vmis)
	return perVMI * 1000, float64(runtime.NumCPU()) / perVMI
}

// queueLatency is a reconcile loop's time in queue and at work over a wave.
type queueLatency struct {
	Adds       float64 `json:"adds"`
	QueueP50ms float64 `json:"queueP50Milliseconds"`
	QueueP99ms float64 `json:"queueP99Milliseconds"`
	WorkP50ms  float64 `json:"workP50Milliseconds"`
	WorkP99ms  float64 `json:"workP99Milliseconds"`
	// Retries are the keys requeued after a failed sync (rate limited: 10 a second past a
	// burst of 100, across the queue).
	Retries float64 `json:"retries"`
}

// scraperAccount reads vireo-controller's /metrics: its /metrics take only bearer tokens,
// authorized by kube-apiserver for get /metrics, as a monitoring stack's ServiceAccount would.
const (
	scraperAccount    = "scalebench-scraper"
	metricsReaderRole = "vireo:metrics-reader"
)

// metricsScraper reads vireo-controller's metrics with a token of scraperAccount.
type metricsScraper struct {
	cl    *clients
	token string
	http  *http.Client
}

// newMetricsScraper creates the ServiceAccount in namespace ns, its binding and a token.
func newMetricsScraper(ctx context.Context, cl *clients, ns string) (*metricsScraper, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: scraperAccount}}
	if _, err := cl.kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: scraperAccount},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: scraperAccount, Namespace: ns}}}
	if _, err := cl.kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	tr, err := cl.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, scraperAccount, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token for %s: %w", scraperAccount, err)
	}
	// The controller's metrics certificate is self-signed: the token is the secret here, and
	// it goes only to a Pod address of the installation's own network namespace.
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
	return &metricsScraper{cl: cl, token: tr.Status.Token, http: hc}, nil
}

// controllerMetrics reads vireo-controller's /metrics (its Pod's address, port 8443).
func (s *metricsScraper) controllerMetrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	pods, err := s.cl.kube.CoreV1().Pods("vireo-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vireo-controller"})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" {
			continue
		}
		body, err := apimetrics.GetOK(ctx, s.http, "https://"+net.JoinHostPort(p.Status.PodIP, "8443")+"/metrics", s.token)
		if err != nil {
			return nil, fmt.Errorf("scraping vireo-controller Pod %s: %w", p.Name, err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		return parser.TextToMetricFamilies(bytes.NewReader(body))
	}
	return nil, fmt.Errorf("no vireo-controller Pod with an address")
}

// queueLatencies are, per queue (the workqueue metrics' name label), the latencies between two
// scrapes, read from the histograms' buckets.
func queueLatencies(before, after map[string]*dto.MetricFamily) map[string]queueLatency {
	queue := histogramDelta(before["workqueue_queue_duration_seconds"], after["workqueue_queue_duration_seconds"])
	work := histogramDelta(before["workqueue_work_duration_seconds"], after["workqueue_work_duration_seconds"])
	retries := counterDelta(before["workqueue_retries_total"], after["workqueue_retries_total"])
	out := map[string]queueLatency{}
	for name, q := range queue {
		if q.count == 0 {
			continue
		}
		w := work[name]
		out[name] = queueLatency{Adds: q.count, QueueP50ms: q.quantile(0.5) * 1000, QueueP99ms: q.quantile(0.99) * 1000,
			WorkP50ms: w.quantile(0.5) * 1000, WorkP99ms: w.quantile(0.99) * 1000, Retries: retries[name]}
	}
	return out
}

// counterDelta is after minus before of a counter, per value of the "name" label.
func counterDelta(before, after *dto.MetricFamily) map[string]float64 {
	read := func(f *dto.MetricFamily) map[string]float64 {
		out := map[string]float64{}
		for _, m := range f.GetMetric() {
			out[queueName(m)] = m.GetCounter().GetValue()
		}
		return out
	}
	b, out := read(before), read(after)
	for name := range out {
		out[name] -= b[name]
	}
	return out
}

// histogram is a cumulative histogram: count observations, bucket upper bounds and counts.
type histogram struct {
	count  float64
	bounds []float64
	counts []float64
}

// quantile estimates quantile q as Prometheus's histogram_quantile does: linearly within the
// bucket that holds it. Past the largest finite bound it is that bound.
func (h histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	rank := q * h.count
	lower, below := 0.0, 0.0
	for i, c := range h.counts {
		upper := h.bounds[i]
		if math.IsInf(upper, 1) {
			return lower
		}
		if c >= rank {
			if c == below {
				return upper
			}
			return lower + (upper-lower)*(rank-below)/(c-below)
		}
		lower, below = upper, c
	}
	return lower
}

// histogramDelta is after minus before, per value of the "name" label.
func histogramDelta(before, after *dto.MetricFamily) map[string]histogram {
	read := func(f *dto.MetricFamily) map[string]histogram {
		out := map[string]histogram{}
		if f == nil {
			return out
		}
		for _, m := range f.Metric {
			name := queueName(m)
			h := histogram{count: float64(m.GetHistogram().GetSampleCount())}
			for _, b := range m.GetHistogram().GetBucket() {
				h.bounds = append(h.bounds, b.GetUpperBound())
				h.counts = append(h.counts, float64(b.GetCumulativeCount()))
			}
			out[name] = h
		}
		return out
	}
	b, a := read(before), read(after)
	for name, h := range a {
		if prev, ok := b[name]; ok && len(prev.counts) == len(h.counts) {
			h.count -= prev.count
			for i := range h.counts {
				h.counts[i] -= prev.counts[i]
			}
			a[name] = h
		}
	}
	return a
}

// queueName is a workqueue metric's "name" label: the queue's name.
func queueName(m *dto.Metric) string {
	for _, l := range m.Label {
		if l.GetName() == "name" {
			return l.GetValue()
		}
	}
	return ""
}
