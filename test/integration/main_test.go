// Package integration tests vireo-apiserver in-process on its embedded etcd, through
// the generated clientset, as Go programs consume the API.
package integration

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/test/framework"
)

// server is shared by the tests of this package; each test uses its own namespace.
var server *framework.APIServer

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("integration tests skipped with -short")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "vireo-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server, err = framework.StartAPIServer(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting vireo-apiserver:", err)
		os.Exit(1)
	}
	code := m.Run()
	server.Stop()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var nsCounter int

// namespace returns a fresh namespace name for one test. Vireo's server does not
// require namespaces to exist (there is no core API in-process).
func namespace(t *testing.T) string {
	t.Helper()
	nsCounter++
	return fmt.Sprintf("it-%d", nsCounter)
}

// newVMI returns a minimal valid VMI: 64Mi of memory and one containerDisk.
func newVMI(name string) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceMemory: resource.MustParse("64Mi"),
				}},
			},
			Volumes: []v1.Volume{{
				Name:         "root",
				VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "registry.local/tiny:1.0"}},
			}},
		},
	}
}
