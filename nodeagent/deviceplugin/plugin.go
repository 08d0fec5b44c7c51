// Package deviceplugin serves an extended resource of identical, shareable devices (such as
// KubeVirt's devices.kubevirt.io/kvm) to the kubelet through its device plugin API
// (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1): it listens on a unix socket in the kubelet's
// device-plugins directory, registers the resource, advertises Count devices whose health a
// probe decides, and answers every allocation with the same device nodes. When the kubelet
// restarts it empties that directory; the plugin notices its socket is gone, serves again and
// registers anew. ServeKVM serves KubeVirt's devices.kubevirt.io/kvm with it.
package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Plugin is one extended resource's device plugin.
type Plugin struct {
	// Resource is the extended resource's name, such as devices.kubevirt.io/kvm.
	Resource string
	// Dir is the kubelet's device-plugins directory, where its kubelet.sock is.
	Dir string
	// Socket is the plugin's socket's file name in Dir.
	Socket string
	// Count is how many devices are advertised: how many containers may use the resource at once.
	Count int
	// Devices are the device nodes every allocated container gets.
	Devices []*pluginapi.DeviceSpec
	// Health says whether the devices are usable, and why; probed at start and every
	// HealthInterval. Unhealthy devices stay in the node's capacity but leave its allocatable.
	Health         func() (bool, string)
	HealthInterval time.Duration
	// CheckInterval is how often the socket is checked (the kubelet removes it on restart).
	CheckInterval time.Duration

	mu         sync.Mutex
	probedOnce bool
	healthy    bool
	changed    chan struct{} // closed and replaced when health changes
}

// Run serves and registers the plugin until ctx ends; failures are logged and retried.
func (p *Plugin) Run(ctx context.Context) error {
	if p.Count < 1 || p.Resource == "" || p.Socket == "" || p.Health == nil || p.HealthInterval <= 0 || p.CheckInterval <= 0 {
		return fmt.Errorf("device plugin %q: incomplete configuration", p.Resource)
	}
	p.changed = make(chan struct{})
	p.probe()
	go p.probeEvery(ctx)
	for ctx.Err() == nil {
		if err := p.serveOnce(ctx); err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "Device plugin stopped; serving again", "resource", p.Resource)
		}
		select {
		case <-ctx.Done():
		case <-time.After(p.CheckInterval):
		}
	}
	return ctx.Err()
}

// serveOnce listens, registers with the kubelet and serves until the socket disappears or
// ctx ends.
func (p *Plugin) serveOnce(ctx context.Context) error {
	path := filepath.Join(p.Dir, p.Socket)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, &service{p: p})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	defer srv.Stop()
	ino, err := inode(path)
	if err != nil {
		return err
	}
	if err := p.register(ctx); err != nil {
		return fmt.Errorf("registering with the kubelet: %w", err)
	}
	klog.InfoS("Device plugin registered", "resource", p.Resource, "socket", path, "devices", p.Count)
	tick := time.NewTicker(p.CheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-served:
			return err
		case <-tick.C:
			if now, err := inode(path); err != nil || now != ino {
				return fmt.Errorf("socket %s was removed (the kubelet restarted?)", path)
			}
		}
	}
}

// register tells the kubelet about the plugin's socket and resource.
func (p *Plugin) register(ctx context.Context) error {
	kubelet := filepath.Join(p.Dir, filepath.Base(pluginapi.KubeletSocket))
	conn, err := grpc.NewClient("unix://"+kubelet, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(rctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: p.Socket, ResourceName: p.Resource,
	})
	return err
}

// probeEvery re-probes the devices' health until ctx ends.
func (p *Plugin) probeEvery(ctx context.Context) {
	tick := time.NewTicker(p.HealthInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			p.probe()
		}
	}
}

// probe runs the health probe and wakes the ListAndWatch streams when the answer changed.
func (p *Plugin) probe() {
	ok, reason := p.Health()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.probedOnce && ok == p.healthy {
		return
	}
	p.probedOnce = true
	klog.InfoS("Device health", "resource", p.Resource, "healthy", ok, "reason", reason)
	p.healthy = ok
	close(p.changed)
	p.changed = make(chan struct{})
}

// state is the current health and the channel that closes when it changes.
func (p *Plugin) state() (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.healthy, p.changed
}

// devices is the advertised list with the given health.
func (p *Plugin) devices(healthy bool) []*pluginapi.Device {
	health := pluginapi.Unhealthy
	if healthy {
		health = pluginapi.Healthy
	}
	out := make([]*pluginapi.Device, p.Count)
	for i := range out {
		out[i] = &pluginapi.Device{ID: p.deviceID(i), Health: health}
	}
	return out
}

// deviceID names device i after the resource: kvm-0, kvm-1, ...
func (p *Plugin) deviceID(i int) string {
	return filepath.Base(p.Resource) + "-" + strconv.Itoa(i)
}

func inode(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}
