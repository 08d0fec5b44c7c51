package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/test/scale/simkubelet"
)

func TestWaves(t *testing.T) {
	for vmis, want := range map[int][]int{100: {100}, 1000: {1000}, 2500: {1000, 2500}, 100000: {1000, 10000, 100000}, 150000: {1000, 10000, 100000, 150000}} {
		if got := waves(vmis); !slices.Equal(got, want) {
			t.Errorf("waves(%d) = %v, want %v", vmis, got, want)
		}
	}
}

func TestConfigRefusesWhatCannotRun(t *testing.T) {
	for name, mutate := range map[string]func(*config){
		"-vmis": func(c *config) { c.vmis = 0 }, "-nodes": func(c *config) { c.nodes = maxNodes + 1 },
		"-rate": func(c *config) { c.rate = -1 }, "-creators": func(c *config) { c.creators = 0 },
		"-namespaces": func(c *config) { c.namespaces = 0 }, "-probes": func(c *config) { c.probes = -1 },
		"-full-path": func(c *config) { c.fullPath = 999 },
	} {
		c := defaultConfig()
		mutate(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the flag", name, err)
		}
	}
	if err := defaultConfig().validate(); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}

func TestProbesCountEachDeliveryOnce(t *testing.T) {
	p := newProbes()
	t0 := time.Now()
	p.send(1, t0)
	p.send(2, t0)
	p.heard("1", t0.Add(30*time.Millisecond))
	p.heard("1", t0.Add(90*time.Millisecond)) // a later event of the same VMI
	p.heard("7", t0.Add(time.Millisecond))    // never sent
	p.heard("", t0)
	got, missing := p.result(1, 3)
	if !slices.Equal(got, []time.Duration{30 * time.Millisecond}) || missing != 1 {
		t.Errorf("result = %v, %d missing; want [30ms], 1", got, missing)
	}
}

func TestQueueLatenciesFromHistogramDeltas(t *testing.T) {
	family := func(counts ...uint64) *dto.MetricFamily {
		bounds := []float64{0.001, 0.01, 0.1, 1}
		h := &dto.Histogram{SampleCount: ptr.To(counts[len(counts)-1])}
		for i, b := range bounds {
			h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: ptr.To(b), CumulativeCount: ptr.To(counts[i])})
		}
		return &dto.MetricFamily{Metric: []*dto.Metric{{Label: []*dto.LabelPair{{Name: ptr.To("name"), Value: ptr.To("vmi")}}, Histogram: h}}}
	}
	retries := func(n float64) *dto.MetricFamily {
		return &dto.MetricFamily{Metric: []*dto.Metric{{Label: []*dto.LabelPair{{Name: ptr.To("name"), Value: ptr.To("vmi")}}, Counter: &dto.Counter{Value: ptr.To(n)}}}}
	}
	before := map[string]*dto.MetricFamily{"workqueue_queue_duration_seconds": family(10, 10, 10, 10), "workqueue_work_duration_seconds": family(10, 10, 10, 10),
		"workqueue_retries_total": retries(3)}
	// 100 more: 50 under 1 ms, 49 more under 10 ms, 1 under 1 s; 7 more retries.
	after := map[string]*dto.MetricFamily{"workqueue_queue_duration_seconds": family(60, 109, 109, 110), "workqueue_work_duration_seconds": family(110, 110, 110, 110),
		"workqueue_retries_total": retries(10)}
	got := queueLatencies(before, after)["vmi"]
	// p50: rank 50 of 100 in the first bucket (50 of them, 0-1 ms); p99: rank 99, 49 of the
	// 49 in 1-10 ms; work: all 100 in the first bucket.
	want := queueLatency{Adds: 100, QueueP50ms: 1, QueueP99ms: 10, WorkP50ms: 0.5, WorkP99ms: 0.99, Retries: 7}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if got.Adds != want.Adds || !near(got.QueueP50ms, want.QueueP50ms) || !near(got.QueueP99ms, want.QueueP99ms) ||
		!near(got.WorkP50ms, want.WorkP50ms) || !near(got.WorkP99ms, want.WorkP99ms) || got.Retries != want.Retries {
		t.Errorf("queueLatencies = %+v, want %+v", got, want)
	}
}

func TestListCasesWantEachShare(t *testing.T) {
	cases := listCases("kubevirt.io", 1050, 10, nil)
	if len(cases) != 8 {
		t.Fatalf("%d cases, want 4 shapes unpaged and paged", len(cases))
	}
	wants := map[string]int{"all namespaces": 1050, "one namespace": 105, "label selector (1/100)": 11, "a node's VMIs": -1}
	for _, c := range cases {
		if c.Want != wants[c.Name] {
			t.Errorf("%s: want %d VMIs, expected %d", c.Name, c.Want, wants[c.Name])
		}
	}
}

// TestScaleSmoke runs the harness briefly (make test's share of `make scale`): 100 VMIs on 10
// simulated nodes through the real control plane, and the CRD baseline, in an installation of
// its own. It fails unless every VMI reached Running, every fan-out probe was delivered by its
// node's watch, every list returned what was stored, and the figures were written.
func TestScaleSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an installation")
	}
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	c := defaultConfig()
	c.out, c.root = t.TempDir(), filepath.Join(repo, "_output", "scale-smoke")
	c.bin, c.manifests = filepath.Join(repo, "_output", "bin"), filepath.Join(repo, "artifacts")
	c.vmis, c.nodes, c.rate, c.probes, c.namespaces, c.smoke = 100, 10, 50, 20, 4, true
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := run(ctx, c); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(c.out, "scale.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Sizes) != 1 || rep.Sizes[0].CRD == nil {
		t.Fatalf("report has %d sizes (CRD measured: %v), want one size with both targets", len(rep.Sizes), len(rep.Sizes) > 0 && rep.Sizes[0].CRD != nil)
	}
	v, crd := rep.Sizes[0].Vireo, rep.Sizes[0].CRD
	if v.ToRunning.Ops != c.vmis || v.NotRunning != 0 {
		t.Errorf("%d VMIs seen Running (%d not), want %d", v.ToRunning.Ops, v.NotRunning, c.vmis)
	}
	for name, r := range map[string]*targetResult{"vireo": &v, "crd": crd} {
		if r.Fanout.Ops != c.probes || r.FanoutMissing != 0 {
			t.Errorf("%s: %d fan-out probes delivered, %d lost; want all %d", name, r.Fanout.Ops, r.FanoutMissing, c.probes)
		}
		wantLists := map[string]int{"vireo": 16, "crd": 8}[name] // Vireo's in JSON and in protobuf
		if r.Created != c.vmis || len(r.Lists) != wantLists || r.Usage.Memory["kube-apiserver"].RSS == 0 {
			t.Errorf("%s: created %d, %d lists (want %d), usage %+v", name, r.Created, len(r.Lists), wantLists, r.Usage)
		}
	}
	if pb := v.fullListProtobuf(); pb == nil || pb.Items != c.vmis || pb.Bytes >= v.Lists[0].Bytes {
		t.Errorf("Vireo's full list in protobuf: %+v; want all %d VMIs in fewer bytes than JSON's %d", pb, c.vmis, v.Lists[0].Bytes)
	}
	if p := v.AfterLists.Memory["vireo-apiserver"].Peak; p < v.Usage.Memory["vireo-apiserver"].RSS {
		t.Errorf("vireo-apiserver's peak RSS after the lists %d is below its RSS before them %d", p, v.Usage.Memory["vireo-apiserver"].RSS)
	}
	if v.Usage.Memory["vireo-apiserver"].RSS == 0 || v.Usage.Memory["vireo-apiserver"].Anon == 0 || v.Usage.DB["vireo"] == 0 || v.WritesPerVMI < 1 || v.Queues["vmi"].Adds == 0 {
		t.Errorf("vireo's usage %+v, %.2f writes per VMI, queues %+v", v.Usage, v.WritesPerVMI, v.Queues)
	}
	if len(v.Steps) != len(stepOrder) {
		t.Errorf("steps measured: %+v, want all of %v", v.Steps, stepOrder)
	}
	for _, st := range v.Steps {
		if st.Count != c.vmis || st.P99s > v.ToRunning.P99ms/1000+1 {
			t.Errorf("step %+v: want all %d VMIs, none later than Running's p99 (%.1f s)", st, c.vmis, v.ToRunning.P99ms/1000)
		}
	}
	for _, f := range []string{"scale.txt", filepath.Base(timelineFile(c.out, c.vmis))} {
		if _, err := os.Stat(filepath.Join(c.out, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestStepTimesFromTheVMIAndItsPod(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(1000+int64(s), 0)) }
	vmi := &v1.VirtualMachineInstance{Status: v1.VirtualMachineInstanceStatus{PhaseTransitionTimestamps: []v1.VirtualMachineInstancePhaseTransitionTimestamp{
		{Phase: v1.Pending, PhaseTransitionTimestamp: at(0)}, {Phase: v1.Scheduling, PhaseTransitionTimestamp: at(2)},
		{Phase: v1.Scheduled, PhaseTransitionTimestamp: at(9)}, {Phase: v1.Running, PhaseTransitionTimestamp: at(11)}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(3)}}
	bound := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(5)}
	pod.Status.Conditions = []corev1.PodCondition{bound}
	// The simulated kubelet's Running status keeps the scheduler's PodScheduled, as a kubelet does.
	pod.Status = simkubelet.RunningStatus(pod, "10.0.0.1", at(7))
	got := stepTimes(vmi, pod)
	want := map[string]int{stepScheduling: 2, stepPodCreated: 3, stepPodBound: 5, stepPodReady: 7, stepScheduled: 9}
	if len(got) != len(want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	for step, s := range want {
		if !got[step].Equal(at(s).Time) {
			t.Errorf("%s at %v, want %v", step, got[step], at(s).Time)
		}
	}
	if n := len(stepTimes(vmi, nil)); n != 2 {
		t.Errorf("without a Pod: %d steps, want the VMI's 2", n)
	}
	tl := &timeline{at: map[string][]time.Time{}, after: map[string][]time.Duration{}}
	for i := range 100 {
		tl.add(stepRunning, time.Unix(0, 0), time.Unix(int64(i+1), 0))
	}
	if l := tl.latencies(); len(l) != 1 || l[0].Count != 100 || l[0].P50s != 50 || l[0].P90s != 90 || l[0].P99s != 99 {
		t.Errorf("latencies %+v, want 100 VMIs p50 50 s, p90 90 s, p99 99 s", l)
	}
}
