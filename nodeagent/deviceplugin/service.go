package deviceplugin

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/grpc"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// service is the plugin's gRPC service, called by the kubelet.
type service struct {
	pluginapi.UnimplementedDevicePluginServer
	p *Plugin
}

// GetDevicePluginOptions: no PreStartContainer, no preferred allocation.
func (s *service) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the devices, then again whenever their health changes.
func (s *service) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		healthy, changed := s.p.state()
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: s.p.devices(healthy)}); err != nil {
			return err
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-changed:
		}
	}
}

// Allocate gives each container the plugin's device nodes; the devices are identical and
// shared, so which IDs the kubelet picked does not matter, only that they are the plugin's.
func (s *service) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	known := s.p.devices(true)
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		for _, id := range c.DevicesIds {
			if !slices.ContainsFunc(known, func(d *pluginapi.Device) bool { return d.ID == id }) {
				return nil, fmt.Errorf("%s has no device %q", s.p.Resource, id)
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{Devices: s.p.Devices})
	}
	return resp, nil
}

// GetPreferredAllocation is not offered (GetDevicePluginOptions says so); answered empty.
func (s *service) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
}

// PreStartContainer is not asked for; answered empty.
func (s *service) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
