package main

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// Milestones of one VMI's start, in the order they normally happen; each is recorded the first
// time the benchmark observes it (informers for the API, the console socket for the guest).
const (
	msPending       = "VMI Pending"
	msPodCreated    = "launcher Pod created"
	msScheduling    = "VMI Scheduling"
	msPodBound      = "Pod bound to a node"
	msPodRunning    = "Pod Running"
	msScheduled     = "VMI Scheduled"
	msLauncherReady = "launcher ready (log)"
	// libvirt binds the serial console's socket itself (QEMU gets its descriptor) while it
	// prepares the domain's start, before QEMU runs.
	msConsole       = "console socket bound (libvirt)"
	msHostnameFail  = "hostname lookup failed (libvirtd log)"
	msQEMULaunched  = "QEMU launched (libvirtd log)"
	msDomainStarted = "domain started (log)"
	msRunning       = "VMI Running"
	msMarker        = "guest marker"
)

var milestoneOrder = []string{msPending, msPodCreated, msScheduling, msPodBound, msPodRunning, msScheduled,
	msLauncherReady, msConsole, msHostnameFail, msQEMULaunched, msDomainStarted, msRunning, msMarker}

// vmiTrack is what the benchmark observed of one VMI.
type vmiTrack struct {
	name    string
	created time.Time // just before the create request
	at      map[string]time.Time
	podUID  types.UID
	pod     string
	node    string
	console *consoleWatch
	gone    time.Time
}

// tracker records the milestones of the VMIs of one namespace from informers and starts a
// console watch as soon as a VMI's launcher Pod is bound to a node.
type tracker struct {
	ctx     context.Context
	nodeDir func(node string) string
	mu      sync.Mutex
	vmis    map[string]*vmiTrack
	changed chan struct{}
}

func newTracker(ctx context.Context, nodeDir func(string) string) *tracker {
	return &tracker{ctx: ctx, nodeDir: nodeDir, vmis: map[string]*vmiTrack{}, changed: make(chan struct{}, 1)}
}

// start runs the VMI and Pod informers of ns until ctx ends and waits for their caches.
func (t *tracker) start(ctx context.Context, cl *clients, ns string) error {
	vf := vireoinformers.NewSharedInformerFactoryWithOptions(cl.vireo, 0, vireoinformers.WithNamespace(ns))
	kf := informers.NewSharedInformerFactoryWithOptions(cl.kube, 0, informers.WithNamespace(ns))
	vmiInf := vf.Kubevirt().V1().VirtualMachineInstances().Informer()
	podInf := kf.Core().V1().Pods().Informer()
	if _, err := vmiInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.onVMI(obj) },
		UpdateFunc: func(_, obj any) { t.onVMI(obj) },
		DeleteFunc: func(obj any) { t.onVMIDeleted(obj) },
	}); err != nil {
		return err
	}
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.onPod(obj) },
		UpdateFunc: func(_, obj any) { t.onPod(obj) },
	}); err != nil {
		return err
	}
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), vmiInf.HasSynced, podInf.HasSynced) {
		return ctx.Err()
	}
	return nil
}

// expect registers a VMI about to be created.
func (t *tracker) expect(name string, created time.Time) *vmiTrack {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := &vmiTrack{name: name, created: created, at: map[string]time.Time{}}
	t.vmis[name] = v
	return v
}

// mark records milestone m of vmi at time at unless it was recorded before.
func (t *tracker) mark(v *vmiTrack, m string, at time.Time) {
	if _, ok := v.at[m]; !ok {
		v.at[m] = at
		t.signal()
	}
}

func (t *tracker) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *tracker) onVMI(obj any) {
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.vmis[vmi.Name]
	if v == nil {
		return
	}
	phases := map[v1.VirtualMachineInstancePhase]string{v1.Pending: msPending, v1.Scheduling: msScheduling,
		v1.Scheduled: msScheduled, v1.Running: msRunning}
	if m, ok := phases[vmi.Status.Phase]; ok {
		t.mark(v, m, now)
	}
	// A phase skipped between two observations still happened no later than now.
	for _, p := range vmi.Status.PhaseTransitionTimestamps {
		if m, ok := phases[p.Phase]; ok {
			t.mark(v, m, now)
		}
	}
	if vmi.Status.Phase == v1.Failed {
		v.at["failed"] = now
		t.signal()
	}
}

func (t *tracker) onVMIDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if v := t.vmis[vmi.Name]; v != nil && v.gone.IsZero() {
		v.gone = time.Now()
		t.signal()
	}
}

func (t *tracker) onPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var v *vmiTrack
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "VirtualMachineInstance" {
			v = t.vmis[ref.Name]
		}
	}
	if v == nil {
		return
	}
	t.mark(v, msPodCreated, now)
	if pod.Spec.NodeName == "" {
		return
	}
	t.mark(v, msPodBound, now)
	if pod.Status.Phase == corev1.PodRunning {
		t.mark(v, msPodRunning, now)
	}
	if v.console == nil {
		v.podUID, v.pod, v.node = pod.UID, pod.Name, pod.Spec.NodeName
		dir := filepath.Join(t.nodeDir(pod.Spec.NodeName), "kubelet", "pods", protocol.EmptyDirPath(string(pod.UID), launcherpodapi.RunDirVolumeName))
		v.console = watchConsole(t.ctx, filepath.Join(dir, protocol.ConsoleSocket))
		go func(w *consoleWatch) {
			select {
			case <-w.done:
			case <-t.ctx.Done():
			}
			t.signal()
		}(v.console)
	}
}

// wait blocks until done, called under the tracker's lock, is true, or ctx ends.
func (t *tracker) wait(ctx context.Context, done func() bool) error {
	for {
		t.mu.Lock()
		ok := done()
		t.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-t.changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
