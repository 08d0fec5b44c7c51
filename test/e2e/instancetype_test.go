package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestVMFromInstancetypeAndPreference: a VM names an instancetype (2 vCPUs, 160Mi) and a
// preference (vCPUs as cores); its guest boots with 2 CPUs, laid out as cores, and the VM's status
// names the revisions used. Editing the instancetype leaves the running guest alone; restarting
// the VM applies the new version (1 vCPU) from a new revision.
func TestVMFromInstancetypeAndPreference(t *testing.T) {
	ns := namespace(t)
	image := cluster.RegistryAddress() + "/vireo/tiny-containerdisk:latest"
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, `apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineInstancetype
metadata: {name: small}
spec:
  cpu: {guest: 2}
  memory: {guest: 160Mi}
---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachinePreference
metadata: {name: cores}
spec:
  cpu: {preferredCPUTopology: cores}
  devices: {preferredDiskBus: virtio}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: sized}
spec:
  runStrategy: Always
  instancetype: {kind: VirtualMachineInstancetype, name: small}
  preference: {kind: VirtualMachinePreference, name: cores}
  template:
    spec:
      domain: {devices: {}}
      volumes:
        - name: rootdisk
          containerDisk: {image: `+image+`}
`))
	first := waitPhase(t, ns, "sized", v1.Running, 2*time.Minute)
	cpu, mem := first.Spec.Domain.CPU, first.Spec.Domain.Memory
	if cpu == nil || cpu.Cores != 2 || cpu.Sockets != 1 || mem == nil || mem.Guest == nil || mem.Guest.String() != "160Mi" ||
		first.Spec.Domain.Devices.Disks[0].Disk.Bus != v1.DiskBusVirtio {
		t.Fatalf("the VMI's CPU %+v, memory %+v, disks %+v; want 2 cores, 160Mi, a virtio disk", cpu, mem, first.Spec.Domain.Devices.Disks)
	}
	guestCPUs(t, ns, "sized", "2")
	vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "sized", metav1.GetOptions{})
	if err != nil || vm.Status.InstancetypeRef == nil || vm.Status.InstancetypeRef.ControllerRevisionRef == nil || vm.Status.PreferenceRef == nil {
		t.Fatalf("VM status refs: %+v %+v (%v)", vm.Status.InstancetypeRef, vm.Status.PreferenceRef, err)
	}
	firstRevision := vm.Status.InstancetypeRef.ControllerRevisionRef.Name
	if _, err := kube.AppsV1().ControllerRevisions(ns).Get(t.Context(), firstRevision, metav1.GetOptions{}); err != nil {
		t.Errorf("the revision %s: %v", firstRevision, err)
	}

	kubectl(t, "-n", ns, "patch", "vminstancetype", "small", "--type", "merge", "-p", `{"spec":{"cpu":{"guest":1}}}`)
	if got, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), "sized", metav1.GetOptions{}); err != nil || got.UID != first.UID {
		t.Fatalf("the edit of the instancetype touched the running VMI: %v", err)
	}
	if _, err := vireo.KubevirtV1().RESTClient().Put().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces/" + ns + "/virtualmachines/sized/restart").
		Body([]byte("{}")).DoRaw(t.Context()); err != nil {
		t.Fatalf("restart: %v", err)
	}
	second := waitVMI(t, ns, "sized", 2*time.Minute, "a new VMI Running after the restart", func(v *v1.VirtualMachineInstance) bool {
		return v.UID != first.UID && v.Status.Phase == v1.Running
	})
	if c := second.Spec.Domain.CPU; c.Cores != 1 || c.Sockets != 1 {
		t.Errorf("after the restart: CPU %+v, want the instancetype's new single vCPU", c)
	}
	guestCPUs(t, ns, "sized", "1")
	eventuallyWithin(t, "the VM names the new revision", 30*time.Second, func() error {
		vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "sized", metav1.GetOptions{})
		if err != nil || vm.Status.InstancetypeRef == nil || vm.Status.InstancetypeRef.ControllerRevisionRef.Name == firstRevision {
			return fmt.Errorf("instancetypeRef %+v (%v)", vm.Status.InstancetypeRef, err)
		}
		return nil
	})
}

// guestCPUs waits for the guest's console and checks it counts want CPUs.
func guestCPUs(t *testing.T, ns, name, want string) {
	t.Helper()
	con := openConsole(t, ns, name)
	con.waitFor(t, guestMarker, 90*time.Second)
	con.send(t, "echo CPUS=$(grep -c ^processor /proc/cpuinfo)")
	con.waitFor(t, "CPUS="+want, 30*time.Second)
}
