package reconcile

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestOwnerHandlersQueueTheController(t *testing.T) {
	l := NewLoop("test", func(context.Context, string) error { return nil })
	owned := func(kind, name string) *corev1.Pod {
		yes := true
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod", OwnerReferences: []metav1.OwnerReference{
			{Kind: kind, Name: name, Controller: &yes}, {Kind: kind, Name: "not-the-controller"}}}}
	}
	h := l.OwnerHandlers("VirtualMachineInstance")
	h.OnAdd(owned("VirtualMachineInstance", "vmi-a"), false)
	h.OnUpdate(nil, owned("VirtualMachine", "vm-b")) // another kind: ignored
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/pod", Obj: owned("VirtualMachineInstance", "vmi-c")})
	h.OnAdd(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orphan"}}, false)
	var got []string
	for l.queue.Len() > 0 {
		k, _ := l.queue.Get()
		got = append(got, k)
		l.queue.Done(k)
	}
	if len(got) != 2 || got[0] != "ns/vmi-a" || got[1] != "ns/vmi-c" {
		t.Errorf("queued %v, want [ns/vmi-a ns/vmi-c]", got)
	}
}
