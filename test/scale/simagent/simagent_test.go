package simagent

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
)

func vmi(name, node string, phase v1.VirtualMachineInstancePhase, deleting bool) *v1.VirtualMachineInstance {
	out := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Status: v1.VirtualMachineInstanceStatus{NodeName: node}}
	out.Status.SetPhase(phase, metav1.NewTime(time.Now().Add(-time.Second)))
	if deleting {
		out.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		out.Finalizers = []string{v1.VirtualMachineInstanceFinalizer}
	}
	return out
}

func TestAgentsReportAsTheNodeAgentDoes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := vireofake.NewSimpleClientset(vmi("starting", "n1", v1.Scheduled, false), vmi("pending", "", v1.Pending, false),
		vmi("stopping", "n2", v1.Running, true), vmi("elsewhere", "n9", v1.Scheduled, false))
	a := New(client, []string{"n1", "n2"}, 2)
	var mu sync.Mutex
	heard := map[string]string{}
	a.OnEvent = func(node string, vmi *v1.VirtualMachineInstance, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		heard[vmi.Name] = node
	}
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	phase := func(name string) v1.VirtualMachineInstancePhase {
		got, err := client.KubevirtV1().VirtualMachineInstances("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.Phase
	}
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return phase("starting") == v1.Running && phase("stopping") == v1.Succeeded, nil
	})
	if err != nil {
		t.Fatalf("starting is %s, stopping %s; want Running and Succeeded", phase("starting"), phase("stopping"))
	}
	if p, q := phase("pending"), phase("elsewhere"); p != v1.Pending || q != v1.Scheduled {
		t.Errorf("VMIs of no simulated node changed: pending %s, elsewhere %s", p, q)
	}
	got, _ := client.KubevirtV1().VirtualMachineInstances("ns").Get(ctx, "starting", metav1.GetOptions{})
	if c := got.Status.Condition(v1.VirtualMachineInstanceReady); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", c)
	}
	mu.Lock()
	if want := map[string]string{"starting": "n1", "stopping": "n2"}; !maps.Equal(heard, want) {
		t.Errorf("OnEvent heard %v, want %v (each VMI from its own node's watch only)", heard, want)
	}
	mu.Unlock()
	if _, ok := Next(got, "n1", metav1.Now()); ok {
		t.Error("a Running VMI got another write")
	}
}
