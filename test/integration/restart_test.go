package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/apiserver"
	"github.com/vireo-dev/vireo/apiserver/embeddedetcd"
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

// TestExternalEtcd points the server at an etcd it did not start (--etcd-servers), as
// production installations do, and checks that objects land there.
func TestExternalEtcd(t *testing.T) {
	ctx := context.Background()
	etcd, err := embeddedetcd.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	dataDir := t.TempDir()
	s, err := framework.StartAPIServerWithOptions(ctx, dataDir, func(o *apiserver.Options) {
		o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{etcd.ClientURL}
	})
	if err != nil {
		t.Fatalf("start with --etcd-servers: %v", err)
	}
	defer s.Stop()
	if _, err := s.Client.KubevirtV1().VirtualMachineInstances("ext").Create(ctx, newVMI("outside"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "etcd")); !os.IsNotExist(err) {
		t.Errorf("an embedded etcd was started in %s despite --etcd-servers (stat: %v)", dataDir, err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, "/registry/vireo/kubevirt.io/virtualmachineinstances/ext/outside")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the VMI is not in the external etcd: %v, %d keys", err, len(resp.Kvs))
	}
}
