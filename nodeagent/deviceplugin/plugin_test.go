package deviceplugin

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/util/wait"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// registry stands for the kubelet's registration service.
type registry struct {
	pluginapi.UnimplementedRegistrationServer
	mu   sync.Mutex
	reqs []*pluginapi.RegisterRequest
}

func (r *registry) Register(_ context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return &pluginapi.Empty{}, nil
}

func (r *registry) first() *pluginapi.RegisterRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[0]
}

func (r *registry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func startRegistry(t *testing.T, dir string) *registry {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(dir, "kubelet.sock"))
	if err != nil {
		t.Fatal(err)
	}
	reg := &registry{}
	srv := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(srv, reg)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return reg
}

// waitFor polls cond until it holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestPluginRegistersAdvertisesAndAllocates: the plugin registers its resource, lists its
// devices with the probe's health (and lists again when it changes), hands every container
// the device nodes, refuses IDs it does not have, and registers again after its socket was
// removed, as a restarting kubelet removes it.
func TestPluginRegistersAdvertisesAndAllocates(t *testing.T) {
	dir, err := os.MkdirTemp("", "dp") // unix socket paths must stay short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	reg := startRegistry(t, dir)
	var healthy atomic.Bool
	spec := &pluginapi.DeviceSpec{ContainerPath: "/dev/kvm", HostPath: "/dev/kvm", Permissions: "rw"}
	p := &Plugin{Resource: "devices.kubevirt.io/kvm", Dir: dir, Socket: "test.sock", Count: 3,
		Devices: []*pluginapi.DeviceSpec{spec},
		Health:  func() (bool, string) { return healthy.Load(), "test" }, HealthInterval: 10 * time.Millisecond, CheckInterval: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	waitFor(t, "the registration", func() bool { return reg.count() == 1 })
	if r := reg.first(); r.ResourceName != p.Resource || r.Endpoint != "test.sock" || r.Version != pluginapi.Version {
		t.Errorf("registration %+v", r)
	}

	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "test.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pluginapi.NewDevicePluginClient(conn)
	stream, err := client.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	expectList(t, stream, pluginapi.Unhealthy)
	healthy.Store(true)
	expectList(t, stream, pluginapi.Healthy)

	resp, err := client.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"kvm-0"}}, {DevicesIds: []string{"kvm-2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ContainerResponses) != 2 {
		t.Fatalf("%d container responses, want 2", len(resp.ContainerResponses))
	}
	for _, c := range resp.ContainerResponses {
		if len(c.Devices) != 1 || c.Devices[0].HostPath != "/dev/kvm" || c.Devices[0].Permissions != "rw" {
			t.Errorf("container response %+v, want /dev/kvm rw", c)
		}
	}
	if _, err := client.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"kvm-3"}}}}); err == nil {
		t.Error("allocating kvm-3 of 3 devices succeeded")
	}

	if err := os.Remove(filepath.Join(dir, "test.sock")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the registration after the socket was removed", func() bool { return reg.count() == 2 })
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
}

// expectList reads lists until one has all 3 devices with health want.
func expectList(t *testing.T, stream grpc.ServerStreamingClient[pluginapi.ListAndWatchResponse], want string) {
	t.Helper()
	for {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("waiting for devices %s: %v", want, err)
		}
		ok := len(resp.Devices) == 3
		for i, d := range resp.Devices {
			ok = ok && d.Health == want && d.ID == []string{"kvm-0", "kvm-1", "kvm-2"}[i]
		}
		if ok {
			return
		}
	}
}

// TestPluginRefusesIncompleteConfiguration: Run names the resource it cannot serve.
func TestPluginRefusesIncompleteConfiguration(t *testing.T) {
	if err := (&Plugin{Resource: "devices.kubevirt.io/kvm"}).Run(t.Context()); err == nil {
		t.Error("Run without a socket, count or probe succeeded")
	}
}
