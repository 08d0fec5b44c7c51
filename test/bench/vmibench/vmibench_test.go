package main

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vireo-dev/vireo/test/bench/apimetrics"
	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

func TestParseRequestsAndDelta(t *testing.T) {
	before := apimetrics.RequestCounts{}
	after := apimetrics.RequestCounts{}
	exposition := func(create, status float64) []byte {
		return []byte(`# HELP apiserver_request_total Counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="resource",subresource="",verb="GET",version="v1"} 99
apiserver_request_total{code="201",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="resource",subresource="",verb="POST",version="v1"} ` + ftoa(create) + `
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="resource",subresource="status",verb="PUT",version="v1"} ` + ftoa(status) + `
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="namespace",subresource="",verb="LIST",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 5
`)
	}
	if err := apimetrics.ParseRequests(exposition(1, 2), "vireo-apiserver", countedResources["vireo-apiserver"], before); err != nil {
		t.Fatal(err)
	}
	if err := apimetrics.ParseRequests(exposition(3, 10), "vireo-apiserver", countedResources["vireo-apiserver"], after); err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 {
		t.Fatalf("parsed %v; want the CREATE and the status UPDATE only (no reads, no other resource)", after)
	}
	w := delta(before, after, 2, 2, 0)
	if w.VMI != 10 || w.VMIPerVMI != 5 || w.ByVireoPerVMI != 4 || w.Series["vireo-apiserver update virtualmachineinstances/status (200)"] != 8 {
		t.Errorf("delta = %+v", w)
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func TestSummarizeNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 10; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	s := summarize(ds)
	if s.N != 10 || s.P50 != 5 || s.P95 != 10 || s.Max != 10 {
		t.Errorf("summarize = %+v, want p50 5 s, p95 10 s (nearest rank), max 10 s", s)
	}
	if one := summarize(ds[:1]); one.P50 != 10 || one.P95 != 10 {
		t.Errorf("one sample: %+v", one)
	}
}

func TestNormalizeArgs(t *testing.T) {
	a := normalizeArgs([]string{"-chardev", "socket,id=charserial0,path=/var/run/vireo/pods/x/console.sock,server=on,wait=off", "-add-fd", "set=0,fd=23"})
	b := normalizeArgs([]string{"-chardev", "socket,id=charserial0,path=/tmp/vmibench-1/d0/console.sock,server=on,wait=off", "-add-fd", "set=0,fd=31"})
	if d := compareArgs(a, b); d != "" {
		t.Errorf("command lines that differ only in paths and fds differ: %s", d)
	}
	if d := compareArgs(a, append(b, "-S")); d == "" {
		t.Error("an extra argument went unnoticed")
	}
}

func TestMappingSize(t *testing.T) {
	if got := mappingSize("7f0000000000-7f0008000000"); got != 128*hostproc.MiB {
		t.Errorf("mappingSize = %d, want 128 MiB", got)
	}
}

func TestParseArrivals(t *testing.T) {
	body := []byte(`# HELP vireo_vmi_migration_downtime_seconds [ALPHA] ...
vireo_vmi_migration_downtime_seconds_bucket{le="0.1"} 1
vireo_vmi_migration_downtime_seconds_sum 0.093
vireo_vmi_migration_downtime_seconds_count 2
vireo_vmi_migration_transfer_seconds_sum 1.5
vireo_vmi_migration_received_bytes_total 9.6e+07
kubevirt_vmi_migration_data_processed_bytes{name="x",namespace="y",node="z"} 5
`)
	a, err := parseArrivals(body)
	if err != nil {
		t.Fatal(err)
	}
	if want := (arrivals{Count: 2, DowntimeSum: 0.093, TransferSum: 1.5, ReceivedBytes: 9.6e7}); a != want {
		t.Errorf("parseArrivals = %+v, want %+v", a, want)
	}
}

func TestPodRequestsAsTheSchedulerCounts(t *testing.T) {
	req := func(mem, cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	p := &corev1.Pod{Spec: corev1.PodSpec{
		Containers:     []corev1.Container{{Resources: req("288Mi", "10m")}, {Resources: req("32Mi", "5m")}},
		InitContainers: []corev1.Container{{Resources: req("400Mi", "1m")}},
		Overhead:       corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")},
	}}
	mem, cpu := podRequests(p)
	if mem != 410<<20 || cpu != 15 {
		t.Errorf("podRequests = %d MiB, %dm; want 410 MiB (the init container's 400 beats 320, plus 10 overhead) and 15m", mem>>20, cpu)
	}
	node := &corev1.Node{}
	if !schedulable(node) {
		t.Error("a plain node is not schedulable")
	}
	node.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}}
	if !schedulable(node) {
		t.Error("PreferNoSchedule keeps Pods off")
	}
	node.Spec.Taints[0].Effect = corev1.TaintEffectNoSchedule
	if schedulable(node) {
		t.Error("a NoSchedule node counted")
	}
}

func TestDensityFitSentenceNamesTheLimit(t *testing.T) {
	d := densityResult{Asked: 100, Fit: podFit{PodMemoryMiB: 288, PodMilliCPU: 10, Total: 80,
		PerNode: map[string]int{"b": 41, "a": 39}, Binding: map[string]string{"a": "memory", "b": "memory"}}}
	d.Run.VMIs = 80
	want := "the nodes fit 80 launcher Pods of 288 MiB and 10m CPU: a 39 (memory), b 41 (memory); so 80 of the 100 asked were created"
	if got := d.fitSentence(); got != want {
		t.Errorf("fitSentence =\n %s\nwant\n %s", got, want)
	}
	d.Run.CreateStopped = "stopped creating after 70 VMI(s): low memory"
	if got := d.fitSentence(); got[len(got)-len(d.Run.CreateStopped):] != d.Run.CreateStopped {
		t.Errorf("fitSentence = %s; want it to end with why the creates stopped", got)
	}
}
