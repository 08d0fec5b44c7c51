package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/test/framework"
)

func TestObjectsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := framework.StartAPIServer(ctx, dir)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	created, err := s.Client.KubevirtV1().VirtualMachineInstances("persist").Create(ctx, newVMI("keep"), metav1.CreateOptions{})
	if err != nil {
		s.Stop()
		t.Fatalf("create: %v", err)
	}
	s.Stop()

	s, err = framework.StartAPIServer(ctx, dir)
	if err != nil {
		t.Fatalf("restart on the same data directory: %v", err)
	}
	defer s.Stop()
	got, err := s.Client.KubevirtV1().VirtualMachineInstances("persist").Get(ctx, "keep", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after restart: %v", err)
	}
	if got.UID != created.UID || got.Spec.Domain.Machine == nil || got.Spec.Domain.Machine.Type != "q35" {
		t.Fatalf("after restart: uid %s (was %s), machine %+v", got.UID, created.UID, got.Spec.Domain.Machine)
	}
}
