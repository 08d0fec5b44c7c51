package defaults

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// ptr returns a pointer to v.

// newVMI returns a VMI named testvmi with the given spec.
func newVMI(spec v1.VirtualMachineInstanceSpec) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "testvmi", Namespace: "default"}, Spec: spec}
}

// withResources returns a spec with the given CPU and memory requests and limits ("" = unset).
func withResources(cpuReq, cpuLim, memReq, memLim string) v1.VirtualMachineInstanceSpec {
	res := v1.ResourceRequirements{}
	set := func(l *v1.ResourceList, name v1.ResourceName, v string) {
		if v == "" {
			return
		}
		if *l == nil {
			*l = v1.ResourceList{}
		}
		(*l)[name] = resource.MustParse(v)
	}
	set(&res.Requests, v1.ResourceCPU, cpuReq)
	set(&res.Limits, v1.ResourceCPU, cpuLim)
	set(&res.Requests, v1.ResourceMemory, memReq)
	set(&res.Limits, v1.ResourceMemory, memLim)
	return v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Resources: res}}
}

func TestMachineTypeDefault(t *testing.T) {
	vmi := newVMI(v1.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(vmi)
	if got := vmi.Spec.Domain.Machine.Type; got != "q35" {
		t.Errorf("machine type = %q, want q35", got)
	}
	vmi = newVMI(v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Machine: &v1.Machine{Type: "pc-q35-rhel9.4.0"}}})
	SetVirtualMachineInstanceDefaults(vmi)
	if got := vmi.Spec.Domain.Machine.Type; got != "pc-q35-rhel9.4.0" {
		t.Errorf("machine type = %q, want the user's pc-q35-rhel9.4.0", got)
	}
}

func TestCPUTopologyDefaults(t *testing.T) {
	cases := []struct {
		name                   string
		spec                   v1.VirtualMachineInstanceSpec
		cpu                    *v1.CPU
		sockets, cores, thread uint32
	}{
		{name: "no cpu, no resources", spec: withResources("", "", "", ""), sockets: 1, cores: 1, thread: 1},
		{name: "from limit", spec: withResources("", "3", "", ""), sockets: 3, cores: 1, thread: 1},
		{name: "limit wins over request", spec: withResources("1", "4", "", ""), sockets: 4, cores: 1, thread: 1},
		{name: "from request, rounded up", spec: withResources("1500m", "", "", ""), sockets: 2, cores: 1, thread: 1},
		{name: "small request gives one", spec: withResources("100m", "", "", ""), sockets: 1, cores: 1, thread: 1},
		{name: "empty cpu struct", spec: withResources("2", "", "", ""), cpu: &v1.CPU{}, sockets: 2, cores: 1, thread: 1},
		// A partial topology is kept as written, as KubeVirt keeps it.
		{name: "partial: cores", spec: withResources("8", "", "", ""), cpu: &v1.CPU{Cores: 2}, sockets: 0, cores: 2, thread: 0},
		{name: "partial: sockets and threads", spec: withResources("", "", "", ""), cpu: &v1.CPU{Sockets: 2, Threads: 2}, sockets: 2, cores: 0, thread: 2},
		{name: "complete kept", spec: withResources("1", "", "", ""), cpu: &v1.CPU{Sockets: 2, Cores: 3, Threads: 2}, sockets: 2, cores: 3, thread: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Domain.CPU = tc.cpu
			vmi := newVMI(tc.spec)
			SetVirtualMachineInstanceDefaults(vmi)
			c := vmi.Spec.Domain.CPU
			if c.Sockets != tc.sockets || c.Cores != tc.cores || c.Threads != tc.thread {
				t.Errorf("topology = %d/%d/%d, want %d/%d/%d", c.Sockets, c.Cores, c.Threads, tc.sockets, tc.cores, tc.thread)
			}
			if c.Model != "" {
				t.Errorf("cpu model = %q, want it left empty", c.Model)
			}
		})
	}
}

func TestCPURequestDefault(t *testing.T) {
	cases := []struct {
		name, req, lim, want string
	}{
		{name: "only limit", lim: "2", want: "2"},
		{name: "both kept", req: "500m", lim: "2", want: "500m"},
		{name: "only request", req: "1", want: "1"},
		{name: "neither", want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI(withResources(tc.req, tc.lim, "", ""))
			SetVirtualMachineInstanceDefaults(vmi)
			got, ok := vmi.Spec.Domain.Resources.Requests[v1.ResourceCPU]
			if tc.want == "" {
				if ok {
					t.Errorf("cpu request = %s, want none", got.String())
				}
				return
			}
			if !ok || got.Cmp(resource.MustParse(tc.want)) != 0 {
				t.Errorf("cpu request = %s (set %v), want %s", got.String(), ok, tc.want)
			}
		})
	}
}

func TestGuestMemoryDefault(t *testing.T) {
	cases := []struct {
		name, req, lim, guest, want string
	}{
		{name: "from request", req: "1Gi", lim: "2Gi", want: "1Gi"},
		{name: "from limit", lim: "2Gi", want: "2Gi"},
		{name: "user guest kept", req: "1Gi", guest: "512Mi", want: "512Mi"},
		{name: "nothing to copy", want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := withResources("", "", tc.req, tc.lim)
			if tc.guest != "" {
				spec.Domain.Memory = &v1.Memory{Guest: ptr.To(resource.MustParse(tc.guest))}
			}
			vmi := newVMI(spec)
			SetVirtualMachineInstanceDefaults(vmi)
			m := vmi.Spec.Domain.Memory
			if tc.want == "" {
				if m != nil && m.Guest != nil {
					t.Errorf("guest memory = %s, want unset", m.Guest.String())
				}
				return
			}
			if m == nil || m.Guest == nil || m.Guest.Cmp(resource.MustParse(tc.want)) != 0 {
				t.Errorf("guest memory = %v, want %s", m, tc.want)
			}
		})
	}
}

func TestGuestMemoryDefaultIsACopy(t *testing.T) {
	vmi := newVMI(withResources("", "", "1Gi", ""))
	SetVirtualMachineInstanceDefaults(vmi)
	vmi.Spec.Domain.Memory.Guest.Add(resource.MustParse("1Gi"))
	if got := vmi.Spec.Domain.Resources.Requests[v1.ResourceMemory]; got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("changing the guest memory changed the request to %s", got.String())
	}
}

func TestACPIDefault(t *testing.T) {
	vmi := newVMI(v1.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(vmi)
	if f := vmi.Spec.Domain.Features; f == nil || f.ACPI.Enabled == nil || !*f.ACPI.Enabled {
		t.Errorf("features = %+v, want acpi.enabled true", f)
	}
	vmi = newVMI(v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Features: &v1.Features{ACPI: v1.FeatureState{Enabled: ptr.To(false)}}}})
	SetVirtualMachineInstanceDefaults(vmi)
	if e := vmi.Spec.Domain.Features.ACPI.Enabled; *e {
		t.Errorf("acpi.enabled = %v, want the user's false", *e)
	}
}

func TestArchitectureDefault(t *testing.T) {
	vmi := newVMI(v1.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(vmi)
	if got := vmi.Spec.Architecture; got != "amd64" {
		t.Errorf("architecture = %q, want amd64", got)
	}
}
