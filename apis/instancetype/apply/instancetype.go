// Package apply applies an instancetype and a preference to a VMI spec, as KubeVirt does when a
// VM names them: the instancetype's values are authoritative (a VM that sets one of them too is
// refused, naming the field); the preference fills what the VM leaves unset. Pure functions.
package apply

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

// ConflictMessage is KubeVirt's message for fields a VM sets that its instancetype sets too.
const ConflictMessage = "VM field(s) %s conflicts with selected instance type"

// Conflicts are the fields of a VMI spec that its instancetype also sets.
type Conflicts []*field.Path

// Errors turns conflicts into field errors with KubeVirt's message (which names them all).
func (c Conflicts) Errors() field.ErrorList {
	if len(c) == 0 {
		return nil
	}
	names := make([]string, 0, len(c))
	for _, p := range c {
		names = append(names, p.String())
	}
	message := fmt.Sprintf(ConflictMessage, strings.Join(names, ", "))
	errs := make(field.ErrorList, 0, len(c))
	for _, p := range c {
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: p.String(), BadValue: "", Detail: message})
	}
	return errs
}

// Spec applies instancetype (nil: none) and preference (nil: none) to spec, a VMI spec at path
// (a VM's spec.template.spec), and annotations to meta. On conflicts nothing of the preference is
// applied and the conflicts are returned; spec may then be partly changed.
func Spec(path *field.Path, instancetype *v1beta1.VirtualMachineInstancetypeSpec, preference *v1beta1.VirtualMachinePreferenceSpec,
	spec *v1.VirtualMachineInstanceSpec, meta *metav1.ObjectMeta) Conflicts {
	if instancetype != nil {
		var c Conflicts
		c = append(c, instancetypeScheduling(path, instancetype, spec)...)
		c = append(c, instancetypeCPU(path, instancetype, preference, spec)...)
		c = append(c, instancetypeMemory(path, instancetype, spec)...)
		c = append(c, instancetypeDevices(path, instancetype, spec)...)
		c = append(c, annotations(instancetype.Annotations, meta, true)...)
		if len(c) > 0 {
			return c
		}
	}
	if preference != nil {
		Preference(preference, spec, meta)
	}
	return nil
}

func instancetypeScheduling(path *field.Path, it *v1beta1.VirtualMachineInstancetypeSpec, spec *v1.VirtualMachineInstanceSpec) Conflicts {
	var c Conflicts
	if it.NodeSelector != nil {
		if spec.NodeSelector != nil {
			c = append(c, path.Child("nodeSelector"))
		} else {
			spec.NodeSelector = maps.Clone(it.NodeSelector)
		}
	}
	if it.SchedulerName != "" {
		if spec.SchedulerName != "" {
			c = append(c, path.Child("schedulerName"))
		} else {
			spec.SchedulerName = it.SchedulerName
		}
	}
	return c
}

func instancetypeCPU(path *field.Path, it *v1beta1.VirtualMachineInstancetypeSpec, pref *v1beta1.VirtualMachinePreferenceSpec, spec *v1.VirtualMachineInstanceSpec) Conflicts {
	if spec.Domain.CPU == nil {
		spec.Domain.CPU = &v1.CPU{}
	}
	cpu, want := spec.Domain.CPU, it.CPU
	domain := path.Child("domain")
	var c Conflicts
	if _, ok := spec.Domain.Resources.Requests[v1.ResourceCPU]; ok {
		c = append(c, domain.Child("resources", "requests", "cpu"))
	}
	if _, ok := spec.Domain.Resources.Limits[v1.ResourceCPU]; ok {
		c = append(c, domain.Child("resources", "limits", "cpu"))
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"sockets", cpu.Sockets != 0}, {"cores", cpu.Cores != 0}, {"threads", cpu.Threads != 0},
		{"model", cpu.Model != "" && want.Model != nil},
		{"dedicatedCpuPlacement", cpu.DedicatedCPUPlacement && want.DedicatedCPUPlacement != nil},
		{"isolateEmulatorThread", cpu.IsolateEmulatorThread && want.IsolateEmulatorThread != nil},
		{"numa", cpu.NUMA != nil && want.NUMA != nil},
		{"realtime", cpu.Realtime != nil && want.Realtime != nil},
	} {
		if f.set {
			c = append(c, domain.Child("cpu", f.name))
		}
	}
	if len(c) > 0 {
		return c
	}
	if want.Model != nil {
		cpu.Model = *want.Model
	}
	if want.DedicatedCPUPlacement != nil {
		cpu.DedicatedCPUPlacement = *want.DedicatedCPUPlacement
	}
	if want.IsolateEmulatorThread != nil {
		cpu.IsolateEmulatorThread = *want.IsolateEmulatorThread
	}
	if want.NUMA != nil {
		cpu.NUMA = want.NUMA.DeepCopy()
	}
	if want.Realtime != nil {
		cpu.Realtime = want.Realtime.DeepCopy()
	}
	if want.MaxSockets != nil {
		cpu.MaxSockets = *want.MaxSockets
	}
	cpu.Sockets, cpu.Cores, cpu.Threads = Topology(want.Guest, pref)
	return nil
}

// Topology lays vCPUs out as the preference prefers: all as sockets by default (or "any"), as
// cores, as threads, or spread (sockets of ratio cores, cores of ratio threads, or sockets of
// ratio cores of 2 threads).
func Topology(vCPUs uint32, pref *v1beta1.VirtualMachinePreferenceSpec) (sockets, cores, threads uint32) {
	sockets, cores, threads = 1, 1, 1
	if vCPUs <= 1 {
		return
	}
	topology := v1beta1.PreferSockets
	if pref != nil && pref.CPU != nil && pref.CPU.PreferredCPUTopology != nil {
		topology = *pref.CPU.PreferredCPUTopology
	}
	switch topology {
	case v1beta1.PreferCores, v1beta1.DeprecatedPreferCores:
		cores = vCPUs
	case v1beta1.PreferThreads, v1beta1.DeprecatedPreferThreads:
		threads = vCPUs
	case v1beta1.PreferSpread, v1beta1.DeprecatedPreferSpread:
		ratio, across := spreadOptions(pref)
		switch across {
		case v1beta1.SpreadAcrossCoresThreads:
			threads, cores = ratio, vCPUs/ratio
		case v1beta1.SpreadAcrossSocketsCoresThreads:
			threads, cores, sockets = 2, ratio, vCPUs/2/ratio
		default:
			cores, sockets = ratio, vCPUs/ratio
		}
	default:
		sockets = vCPUs
	}
	return
}

func spreadOptions(pref *v1beta1.VirtualMachinePreferenceSpec) (uint32, v1beta1.SpreadAcross) {
	ratio, across := uint32(2), v1beta1.SpreadAcrossSocketsCores
	if pref.PreferSpreadSocketToCoreRatio != 0 {
		ratio = pref.PreferSpreadSocketToCoreRatio
	}
	if o := pref.CPU.SpreadOptions; o != nil {
		if o.Across != nil {
			across = *o.Across
		}
		if o.Ratio != nil {
			ratio = *o.Ratio
		}
	}
	return max(ratio, 1), across
}

func instancetypeMemory(path *field.Path, it *v1beta1.VirtualMachineInstancetypeSpec, spec *v1.VirtualMachineInstanceSpec) Conflicts {
	if spec.Domain.Memory == nil {
		spec.Domain.Memory = &v1.Memory{}
	}
	mem, domain := spec.Domain.Memory, path.Child("domain")
	switch {
	case mem.Guest != nil:
		return Conflicts{domain.Child("memory", "guest")}
	case mem.Hugepages != nil && it.Memory.Hugepages != nil:
		return Conflicts{domain.Child("memory", "hugepages")}
	case mem.MaxGuest != nil && it.Memory.MaxGuest != nil:
		return Conflicts{domain.Child("memory", "maxGuest")}
	}
	if _, ok := spec.Domain.Resources.Requests[v1.ResourceMemory]; ok {
		return Conflicts{domain.Child("resources", "requests", "memory")}
	}
	if _, ok := spec.Domain.Resources.Limits[v1.ResourceMemory]; ok {
		return Conflicts{domain.Child("resources", "limits", "memory")}
	}
	guest := it.Memory.Guest.DeepCopy()
	mem.Guest = &guest
	if p := it.Memory.OvercommitPercent; p > 0 {
		if spec.Domain.Resources.Requests == nil {
			spec.Domain.Resources.Requests = v1.ResourceList{}
		}
		request := guest.Value() * int64(100-p) / 100
		spec.Domain.Resources.Requests[v1.ResourceMemory] = *resource.NewQuantity(request, guest.Format)
	}
	if it.Memory.Hugepages != nil {
		mem.Hugepages = it.Memory.Hugepages.DeepCopy()
	}
	if it.Memory.MaxGuest != nil {
		mem.MaxGuest = new(it.Memory.MaxGuest.DeepCopy())
	}
	return nil
}

func instancetypeDevices(path *field.Path, it *v1beta1.VirtualMachineInstancetypeSpec, spec *v1.VirtualMachineInstanceSpec) Conflicts {
	domain := path.Child("domain")
	var c Conflicts
	d := &spec.Domain
	if it.IOThreadsPolicy != nil {
		if d.IOThreadsPolicy != nil {
			c = append(c, domain.Child("ioThreadsPolicy"))
		} else {
			d.IOThreadsPolicy = new(*it.IOThreadsPolicy)
		}
	}
	if it.IOThreads != nil {
		if d.IOThreads != nil {
			c = append(c, domain.Child("ioThreads"))
		} else {
			d.IOThreads = it.IOThreads.DeepCopy()
		}
	}
	if it.LaunchSecurity != nil {
		if d.LaunchSecurity != nil {
			c = append(c, domain.Child("launchSecurity"))
		} else {
			d.LaunchSecurity = it.LaunchSecurity.DeepCopy()
		}
	}
	if len(it.GPUs) > 0 {
		if len(d.Devices.GPUs) > 0 {
			c = append(c, domain.Child("devices", "gpus"))
		} else {
			d.Devices.GPUs = append([]v1.GPU(nil), it.GPUs...)
		}
	}
	if len(it.HostDevices) > 0 {
		if len(d.Devices.HostDevices) > 0 {
			c = append(c, domain.Child("devices", "hostDevices"))
		} else {
			d.Devices.HostDevices = append([]v1.HostDevice(nil), it.HostDevices...)
		}
	}
	return c
}

// annotations adds annotations to meta; with strict (an instancetype's), a different value
// already there is a conflict at annotations.<key>; otherwise (a preference's) it is kept.
func annotations(add map[string]string, meta *metav1.ObjectMeta, strict bool) Conflicts {
	if len(add) == 0 || meta == nil {
		return nil
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	var c Conflicts
	for k, v := range add {
		if have, ok := meta.Annotations[k]; ok {
			if strict && have != v {
				c = append(c, field.NewPath("annotations").Key(k))
			}
			continue
		}
		meta.Annotations[k] = v
	}
	return c
}
