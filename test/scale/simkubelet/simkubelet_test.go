package simkubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

func launcher(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: node, InitContainers: []corev1.Container{{Name: "setup", Image: "launcher"}},
			Containers: []corev1.Container{{Name: launcherpodapi.ContainerName, Image: "launcher"}, {Name: "sidecar", Image: "sidecar"}}}}
}

func TestNodesPodsAndDeletions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dying := launcher("dying", "sim-0001")
	dying.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	kube := kubefake.NewClientset(launcher("mine", "sim-0000"), launcher("elsewhere", "real-node"), dying)
	k := New(kube, Options{Nodes: 2, Prefix: "sim", Pods: 110, Workers: 2})
	if err := k.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k.Register(ctx); err != nil {
		t.Fatalf("registering again: %v", err)
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 2 {
		t.Fatalf("nodes %v, %v; want 2", nodes, err)
	}
	for _, n := range nodes.Items {
		if len(n.Spec.Taints) != 1 || n.Spec.Taints[0] != Taint || n.Status.Conditions[0].Status != corev1.ConditionTrue ||
			n.Status.Allocatable.Pods().Value() != 110 {
			t.Errorf("node %s: taints %v, conditions %v, allocatable %v", n.Name, n.Spec.Taints, n.Status.Conditions, n.Status.Allocatable)
		}
		if _, err := kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("no Lease for %s: %v", n.Name, err)
		}
	}
	go func() { _ = k.Run(ctx) }()
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		mine, err := kube.CoreV1().Pods("ns").Get(ctx, "mine", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, err = kube.CoreV1().Pods("ns").Get(ctx, "dying", metav1.GetOptions{})
		return launcherpodapi.Started(mine) && Running(mine) && mine.Status.PodIP != "" && apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the simulated node's Pod did not run, or the deleted one stayed: %v", err)
	}
	other, err := kube.CoreV1().Pods("ns").Get(ctx, "elsewhere", metav1.GetOptions{})
	if err != nil || other.Status.Phase != "" {
		t.Errorf("a Pod on a real node was touched: %v %v", other.Status, err)
	}
}

func TestAddresses(t *testing.T) {
	for _, a := range []string{nodeAddress(0).String(), nodeAddress(999).String(), podAddress(100000).String()} {
		if a[:4] != "100." {
			t.Errorf("address %s is not in 100.64.0.0/10", a)
		}
	}
	if podAddress(1) == podAddress(2) || nodeAddress(1) == nodeAddress(256) {
		t.Error("addresses repeat")
	}
}
