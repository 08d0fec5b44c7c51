package framework

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/test/logcapture"
)

// TestCleanStopLogsNoErrors runs vireo-apiserver in-process on its embedded etcd with a
// watch open (as the aggregator keeps one), stops it the way SIGTERM does (its context
// ends) and reads every line it logged: the server must stop using etcd before etcd
// closes, and etcd's own closing must not be reported as an error.
func TestCleanStopLogsNoErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts vireo-apiserver")
	}
	log := logcapture.Klog(t)

	ctx := context.Background()
	s, err := StartAPIServer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	vmis := s.Client.KubevirtV1().VirtualMachineInstances("default")
	w, err := vmis.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "quiet"},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}}},
			Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{
				ContainerDisk: &v1.ContainerDiskSource{Image: "registry.local/tiny:1.0"},
			}}},
		},
	}
	if _, err := vmis.Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		s.Stop()
		t.Fatal(err)
	}
	select {
	case <-w.ResultChan():
	case <-time.After(10 * time.Second):
		t.Error("no watch event within 10s")
	}
	s.Stop()
	w.Stop()
	klog.Flush()
	if !strings.Contains(log.String(), "Embedded etcd ready") {
		t.Fatalf("the log was not captured:\n%s", log)
	}
	if errs := log.ErrorLines(); len(errs) > 0 {
		t.Errorf("%d error lines around a clean start and stop:\n%s", len(errs), strings.Join(errs, "\n"))
	}
}
