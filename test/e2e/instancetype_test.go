package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
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
	t.Parallel()
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

// TestInstancetypeAdmissionReadsTheCluster: VM admission reads what lives in kube-apiserver. A
// VM pinning a ControllerRevision is checked against the version it holds (1 vCPU, short of
// the preference's 2), not the current instancetype (2 vCPUs); a VM inferring its instancetype
// and preference from a labelled claim is stored with their names; an unlabelled claim refuses
// the VM naming the label, unless the failure policy is Ignore.
func TestInstancetypeAdmissionReadsTheCluster(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, `apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineInstancetype
metadata: {name: two}
spec:
  cpu: {guest: 2}
  memory: {guest: 128Mi}
---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachinePreference
metadata: {name: needs-two}
spec:
  requirements: {cpu: {guest: 2}}
---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: two-as-one}
revision: 1
data:
  apiVersion: instancetype.kubevirt.io/v1beta1
  kind: VirtualMachineInstancetype
  metadata: {name: two}
  spec:
    cpu: {guest: 1}
    memory: {guest: 128Mi}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: labelled
  labels:
    instancetype.kubevirt.io/default-instancetype: two
    instancetype.kubevirt.io/default-instancetype-kind: VirtualMachineInstancetype
    instancetype.kubevirt.io/default-preference: needs-two
    instancetype.kubevirt.io/default-preference-kind: VirtualMachinePreference
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: plain}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
`))
	vm := func(name, matchers, claim string, domain ...string) string {
		if len(domain) == 0 {
			domain = []string{"{devices: {}}"}
		}
		return manifestFile(t, `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: `+name+`}
spec:
  runStrategy: Halted
`+matchers+`
  template:
    spec:
      domain: `+domain[0]+`
      volumes:
        - name: rootdisk
          persistentVolumeClaim: {claimName: `+claim+`}
`)
	}
	pinned := `  instancetype: {kind: VirtualMachineInstancetype, name: two, revisionName: two-as-one}
  preference: {kind: VirtualMachinePreference, name: needs-two}`
	_, stderr, err := kubectlResult("-n", ns, "create", "-f", vm("pinned", pinned, "plain"))
	if err == nil || !strings.Contains(stderr, "insufficient CPU resources of 1 vCPU provided by instance type, preference requires 2 vCPU") {
		t.Errorf("a VM pinning a 1-vCPU revision: err %v, stderr %s; want the preference's requirement refused", err, stderr)
	}
	kubectl(t, "-n", ns, "create", "-f", vm("current", strings.ReplaceAll(pinned, ", revisionName: two-as-one", ""), "plain"))

	inferred := `  instancetype: {inferFromVolume: rootdisk}
  preference: {inferFromVolume: rootdisk}`
	kubectl(t, "-n", ns, "create", "-f", vm("inferred", inferred, "labelled"))
	got, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "inferred", metav1.GetOptions{})
	if err != nil || got.Spec.Instancetype == nil || *got.Spec.Instancetype != (v1.InstancetypeMatcher{Name: "two", Kind: "VirtualMachineInstancetype"}) ||
		got.Spec.Preference == nil || *got.Spec.Preference != (v1.PreferenceMatcher{Name: "needs-two", Kind: "VirtualMachinePreference"}) {
		t.Errorf("the inferred VM's matchers: %+v %+v (%v)", got.Spec.Instancetype, got.Spec.Preference, err)
	}
	_, stderr, err = kubectlResult("-n", ns, "create", "-f", vm("unlabelled", inferred, "plain"))
	if err == nil || !strings.Contains(stderr, "spec.instancetype.inferFromVolume") || !strings.Contains(stderr, "instancetype.kubevirt.io/default-instancetype label") {
		t.Errorf("a VM inferring from an unlabelled claim: err %v, stderr %s", err, stderr)
	}
	ignored := `  instancetype: {inferFromVolume: rootdisk, inferFromVolumeFailurePolicy: Ignore}`
	kubectl(t, "-n", ns, "create", "-f", vm("ignored", ignored, "plain", "{devices: {}, memory: {guest: 128Mi}}"))
	if got, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "ignored", metav1.GetOptions{}); err != nil || got.Spec.Instancetype != nil ||
		got.Spec.Template.Spec.Domain.Memory == nil {
		t.Errorf("the VM ignoring the failed inference: %+v, want no instancetype and the template's memory kept (%v)", got.Spec.Instancetype, err)
	}
}

// TestCommonInstancetypeVMRuns: objects shaped as KubeVirt's common-instancetypes bundle install
// with kubectl apply, and a VM of u1.nano with the alpine preference (as `virtctl create vm
// --instancetype u1.nano --preference alpine` writes it) boots with one vCPU, 512Mi and the
// preference's virtio RNG.
func TestCommonInstancetypeVMRuns(t *testing.T) {
	ns := namespace(t)
	bundle := filepath.Join(repo, "test", "testdata", "common-instancetypes.yaml")
	kubectl(t, "apply", "-f", bundle)
	t.Cleanup(func() {
		if _, stderr, err := kubectlResult("delete", "-f", bundle, "--wait=false"); err != nil {
			t.Logf("deleting the instancetypes: %v %s", err, stderr)
		}
	})
	image := cluster.RegistryAddress() + "/vireo/tiny-containerdisk:latest"
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: nano}
spec:
  runStrategy: Always
  instancetype: {kind: virtualmachineclusterinstancetype, name: u1.nano}
  preference: {kind: virtualmachineclusterpreference, name: alpine}
  template:
    spec:
      domain: {devices: {}}
      volumes:
        - name: nano-containerdisk-0
          containerDisk: {image: `+image+`}
`))
	vmi := waitPhase(t, ns, "nano", v1.Running, 2*time.Minute)
	if m := vmi.Spec.Domain.Memory; m == nil || m.Guest == nil || m.Guest.String() != "512Mi" || vmi.Spec.Domain.Devices.Rng == nil ||
		vmi.Annotations["vm.kubevirt.io/os"] != "linux" {
		t.Errorf("the VMI: memory %+v, rng %+v, annotations %v; want u1.nano's 512Mi and alpine's RNG and annotation",
			vmi.Spec.Domain.Memory, vmi.Spec.Domain.Devices.Rng, vmi.Annotations)
	}
	guestCPUs(t, ns, "nano", "1")
}
