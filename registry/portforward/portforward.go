// Package portforward serves KubeVirt's port-forward subresource,
// subresources.kubevirt.io/v1 .../{virtualmachineinstances|virtualmachines}/NAME/portforward/PORT[/PROTOCOL]:
// it finds the VMI (a VM's through its running VMI), dials the port on the VMI's first interface
// address (the Pod's, as KubeVirt's virt-api does) and carries the bytes as binary websocket
// messages, one message per datagram for UDP. Authorization (get on the subresource) happened in
// the server's filters.
package portforward

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Subresource is the subresource's name.
const Subresource = "portforward"

// dialTimeout bounds the connection to the guest's port.
const dialTimeout = 10 * time.Second

// Getter reads VMIs or VMs (their stores).
type Getter = storeutil.Getter

// Forwarder opens tunnels to the ports of VMIs.
type Forwarder struct {
	vmis, vms Getter
	dialer    net.Dialer
}

// New returns the forwarder of the VMIs in vmis and the VMs in vms.
func New(vmis, vms Getter) *Forwarder {
	registerMetrics()
	return &Forwarder{vmis: vmis, vms: vms, dialer: net.Dialer{Timeout: dialTimeout}}
}

// Target is what a request forwards to: a port of a VMI.
type Target struct {
	Port     int
	Protocol string
}

// ParseTarget reads PORT[/PROTOCOL] (the path segments after "portforward"); the protocol is tcp
// when not given.
func ParseTarget(segments []string) (Target, error) {
	if len(segments) == 0 || len(segments) > 2 {
		return Target{}, apierrors.NewBadRequest("port-forward needs a port: .../portforward/PORT or .../portforward/PORT/PROTOCOL (tcp or udp)")
	}
	port, err := strconv.Atoi(segments[0])
	if err != nil || port < 1 || port > 65535 {
		return Target{}, apierrors.NewBadRequest(fmt.Sprintf("port-forward: port %q must be a number from 1 to 65535", segments[0]))
	}
	t := Target{Port: port, Protocol: "tcp"}
	if len(segments) == 2 {
		t.Protocol = segments[1]
		if t.Protocol != "tcp" && t.Protocol != "udp" {
			return Target{}, apierrors.NewBadRequest(fmt.Sprintf("port-forward: protocol %q must be tcp or udp", segments[1]))
		}
	}
	return t, nil
}

// Handler checks the VMI that resource ("virtualmachineinstances" or "virtualmachines") name
// stands for, dials target on it and returns the handler that upgrades the request and carries
// the tunnel. Errors are API status errors, answered before any upgrade.
func (f *Forwarder) Handler(ctx context.Context, resource, name string, target Target) (http.Handler, error) {
	vmi, err := f.vmiFor(ctx, resource, name)
	if err != nil {
		return nil, err
	}
	if err := forwardable(vmi, target); err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(vmi.Status.Interfaces[0].IP, strconv.Itoa(target.Port))
	conn, err := f.dialer.DialContext(ctx, target.Protocol, addr)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("nothing answers on %s port %d of VMI %s/%s (%s): %v",
			target.Protocol, target.Port, vmi.Namespace, vmi.Name, addr, err))
	}
	return &tunnel{conn: conn, vmi: vmi, datagrams: target.Protocol == "udp"}, nil
}

// vmiFor returns the VMI that name stands for: the VMI itself, or a VM's VMI while the VM has
// one (KubeVirt: 409 "VMI is not started" when it has none).
func (f *Forwarder) vmiFor(ctx context.Context, resource, name string) (*v1.VirtualMachineInstance, error) {
	if resource == "virtualmachines" {
		vm, err := storeutil.Get[*v1.VirtualMachine](ctx, f.vms, name)
		if err != nil {
			return nil, err
		}
		vmi, err := storeutil.Get[*v1.VirtualMachineInstance](ctx, f.vmis, name)
		if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(vmi, vm)) {
			return nil, apierrors.NewConflict(v1.Resource("virtualmachines"), name, fmt.Errorf("VMI is not started: start the VM first (vireoctl start %s)", name))
		}
		return vmi, err
	}
	return storeutil.Get[*v1.VirtualMachineInstance](ctx, f.vmis, name)
}

// forwardable refuses a VMI whose port cannot be reached: not running (400 before, 409 after),
// paused (409, as KubeVirt), without an interface address, or a port its interface does not
// forward.
func forwardable(vmi *v1.VirtualMachineInstance, target Target) error {
	gr := v1.Resource("virtualmachineinstances")
	switch vmi.Status.Phase {
	case v1.Running:
	case v1.Succeeded, v1.Failed:
		return apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("the VMI has ended (phase %s): nothing to forward to", vmi.Status.Phase))
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("VMI %s/%s is not running (phase %q): its ports can be forwarded once it is Running", vmi.Namespace, vmi.Name, vmi.Status.Phase))
	}
	if c := vmi.Status.Condition(v1.VirtualMachineInstancePaused); c != nil && c.Status == v1.ConditionTrue {
		return apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("VMI is paused: unpause it to forward its ports"))
	}
	if len(vmi.Status.Interfaces) == 0 || vmi.Status.Interfaces[0].IP == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("VMI %s/%s has no network interface address (status.interfaces): nothing to forward to", vmi.Namespace, vmi.Name))
	}
	ifaces := vmi.Spec.Domain.Devices.Interfaces
	if len(ifaces) == 0 || len(ifaces[0].Ports) == 0 {
		return nil
	}
	listed := slices.ContainsFunc(ifaces[0].Ports, func(p v1.Port) bool {
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		return int(p.Port) == target.Port && proto == target.Protocol
	})
	if !listed {
		return apierrors.NewBadRequest(fmt.Sprintf("%s port %d of VMI %s/%s is not forwarded to the guest: its interface %q lists ports (spec.domain.devices.interfaces[0].ports) and this is not one of them",
			target.Protocol, target.Port, vmi.Namespace, vmi.Name, ifaces[0].Name))
	}
	return nil
}
