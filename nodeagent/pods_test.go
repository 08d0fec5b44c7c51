package nodeagent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs/nodedirstest"
)

// TestForgetGone: on start the agent forgets the Pods that have a shutdown deadline but
// are gone, keeping the live Pods'.
func TestForgetGone(t *testing.T) {
	live, gone := types.UID("6a0c1e2b-1111-4222-8333-944455556666"), types.UID("7b1d2f3c-1111-4222-8333-944455556666")
	d, at := nodedirstest.WithDeadlines(t, live, gone)

	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = idx.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-vm1", UID: live}})
	a := assemble(&Options{RunDir: d.Root}, nil, nil, listers{pods: corelisters.NewPodLister(idx)}, nil)
	a.forgetGone(context.Background())
	if got, ok := d.Deadline(live); !ok || !got.Equal(at) {
		t.Errorf("the live Pod's deadline: %v %t, want %v", got, ok, at)
	}
	if _, ok := d.Deadline(gone); ok {
		t.Error("the deadline of a Pod that is gone survived")
	}
	if uids, err := d.Deadlines(); err != nil || !slices.Equal(uids, []types.UID{live}) {
		t.Errorf("deadlines after garbage collection = %v, %v; want %v", uids, err, live)
	}
}

// TestPodQueueSeedsAndForgets: the Pod queue copies the capabilities seed into a launcher Pod's
// emptyDir once the kubelet created it (looking again until then), and forgets a Pod that is
// gone: its seed record and its shutdown deadline, and any other Pod's session that is gone.
func TestPodQueueSeedsAndForgets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand files to uid 107")
	}
	dirs := nodedirstest.New(t)
	if err := dirs.EnsureBase(); err != nil {
		t.Fatal(err)
	}
	seed := t.TempDir()
	capsFile := strings.Repeat("ab", 32) + ".xml"
	if err := os.WriteFile(filepath.Join(seed, capsFile), []byte("<qemuCaps/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	uid := types.UID("9d3f4b5e-1111-4222-8333-944455556666")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-vm1-abcde", UID: uid,
		Labels: map[string]string{v1.AppLabel: v1.LauncherApp}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = idx.Add(pod)
	a := assemble(&Options{NodeName: "node1", RunDir: dirs.Root, KubeletPodsDir: dirs.Pods, CapabilitiesDir: seed, StreamPing: time.Second},
		nil, nil, listers{pods: corelisters.NewPodLister(idx)}, nil)
	t.Cleanup(a.closeAll)
	key := "ns/" + pod.Name
	seeded := func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.seeds[uid] != nil && a.seeds[uid].done
	}
	if err := a.syncPod(t.Context(), key); err != nil || seeded() {
		t.Fatalf("before the kubelet created the emptyDir: seeded %t, %v", seeded(), err)
	}
	dir := nodedirstest.EmptyDir(t, dirs, uid)
	if err := a.syncPod(t.Context(), key); err != nil || !seeded() {
		t.Fatalf("with the emptyDir: seeded %t, %v", seeded(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "capabilities", capsFile)); err != nil {
		t.Errorf("the seed was not copied: %v", err)
	}
	if err := dirs.SetDeadline(uid, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// A session the VMI queue started with a Pod that went before the Pod queue saw it.
	unseen := types.UID("c0627e81-1111-4222-8333-944455556666")
	a.sessions.Ensure(unseen, "vmi-uid", "ns/vm1")
	_ = idx.Delete(pod)
	if err := a.syncPod(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if a.sessions.Get(unseen) != nil {
		t.Error("the session with a Pod that is gone was kept")
	}
	a.mu.Lock()
	left := a.seeds[uid]
	a.mu.Unlock()
	if _, ok := dirs.Deadline(uid); ok || left != nil {
		t.Errorf("a Pod that is gone left its deadline (%t) or seed record (%v)", ok, left)
	}
}
