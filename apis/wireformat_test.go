package apis

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// A KubeVirt-style VirtualMachine manifest using every area of the supported subset, written the
// way KubeVirt's documentation writes them (dataVolumeTemplates with apiVersion and kind).
const vmManifest = `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: demo
spec:
  runStrategy: RerunOnFailure
  dataVolumeTemplates:
  - apiVersion: cdi.kubevirt.io/v1beta1
    kind: DataVolume
    metadata:
      name: demo-root
    spec:
      storage:
        accessModes: [ReadWriteMany]
        resources:
          requests:
            storage: 2Gi
      source:
        http:
          url: https://images.example.com/disk.qcow2.xz
          checksum: sha256:00ff
  template:
    metadata:
      labels:
        app: demo
    spec:
      evictionStrategy: LiveMigrate
      priorityClassName: vm-high
      terminationGracePeriodSeconds: 10
      nodeSelector:
        kubernetes.io/os: linux
      tolerations:
      - key: dedicated
        operator: Equal
        value: vms
        effect: NoSchedule
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 50
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels:
                  app: demo
      domain:
        cpu:
          cores: 2
          dedicatedCpuPlacement: true
          isolateEmulatorThread: true
        memory:
          guest: 1Gi
        resources:
          requests:
            memory: 1Gi
            cpu: 500m
        machine:
          type: q35
        firmware:
          bootloader:
            efi:
              secureBoot: true
        clock:
          timezone: Europe/Berlin
          timer:
            hpet:
              present: false
            rtc:
              tickPolicy: catchup
              track: guest
        features:
          acpi: {}
          apic:
            endOfInterrupt: true
          smm:
            enabled: true
          hyperv:
            relaxed: {}
            vapic: {}
            spinlocks:
              spinlocks: 8191
            synictimer:
              direct: {}
            tlbflush:
              extended: {}
        devices:
          rng: {}
          tpm:
            persistent: true
          disks:
          - name: root
            bootOrder: 1
            disk:
              bus: virtio
          - name: cloudinit
            cdrom:
              bus: sata
              readonly: true
          - name: shared
            lun:
              bus: scsi
              reservation: true
          interfaces:
          - name: default
            masquerade: {}
            bootOrder: 2
            ports:
            - name: ssh
              port: 22
      networks:
      - name: default
        pod:
          vmNetworkCIDR: 10.0.2.0/24
      volumes:
      - name: root
        dataVolume:
          name: demo-root
      - name: cloudinit
        cloudInitNoCloud:
          userData: |
            #cloud-config
            password: secret
      - name: scratch
        emptyDisk:
          capacity: 1Gi
      - name: shared
        persistentVolumeClaim:
          claimName: shared-pvc
          readOnly: true
      - name: host
        hostDisk:
          path: /var/lib/disks/host.img
          type: DiskOrCreate
          capacity: 1Gi
`

func strictYAML(t *testing.T) runtime.Serializer {
	t.Helper()
	scheme := newScheme()
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
}

// TestKubeVirtManifestDecodes checks that KubeVirt's field names map onto our Go fields.
func TestKubeVirtManifestDecodes(t *testing.T) {
	obj, _, err := strictYAML(t).Decode([]byte(vmManifest), nil, nil)
	if err != nil {
		t.Fatalf("strict decode of a KubeVirt manifest failed: %v", err)
	}
	vm, ok := obj.(*corev1.VirtualMachine)
	if !ok {
		t.Fatalf("decoded %T, want *v1.VirtualMachine", obj)
	}
	if vm.Spec.RunStrategy == nil || *vm.Spec.RunStrategy != corev1.RunStrategyRerunOnFailure {
		t.Errorf("runStrategy = %v, want RerunOnFailure", vm.Spec.RunStrategy)
	}
	dvt := vm.Spec.DataVolumeTemplates[0]
	if got := dvt.Spec.Storage.Resources.Requests.Storage(); got.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("dataVolumeTemplates[0] storage = %v, want 2Gi", got)
	}
	if dvt.Spec.Source.HTTP == nil || dvt.Spec.Source.HTTP.Checksum != "sha256:00ff" {
		t.Errorf("dataVolumeTemplates[0] source/checksum not decoded: %+v", dvt.Spec)
	}
	if len(dvt.Spec.Storage.AccessModes) != 1 || dvt.Spec.Storage.AccessModes[0] != cdiv1beta1.ReadWriteMany {
		t.Errorf("accessModes = %v", dvt.Spec.Storage.AccessModes)
	}
	spec := vm.Spec.Template.Spec
	if spec.EvictionStrategy == nil || *spec.EvictionStrategy != corev1.EvictionStrategyLiveMigrate {
		t.Errorf("evictionStrategy = %v", spec.EvictionStrategy)
	}
	if got := spec.Domain.Resources.Requests.Memory(); got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("memory request = %v", got)
	}
	disks := spec.Domain.Devices.Disks
	if disks[0].Disk == nil || disks[0].Disk.Bus != corev1.DiskBusVirtio || disks[0].BootOrder == nil || *disks[0].BootOrder != 1 {
		t.Errorf("disks[0] = %+v", disks[0])
	}
	if disks[1].CDRom == nil || disks[1].CDRom.ReadOnly == nil || !*disks[1].CDRom.ReadOnly {
		t.Errorf("disks[1] = %+v", disks[1])
	}
	iface := spec.Domain.Devices.Interfaces[0]
	if iface.Masquerade == nil || iface.Bridge != nil || iface.Ports[0].Port != 22 {
		t.Errorf("interfaces[0] = %+v", iface)
	}
	if spec.Networks[0].Pod == nil || spec.Networks[0].Pod.VMNetworkCIDR != "10.0.2.0/24" {
		t.Errorf("networks[0] = %+v", spec.Networks[0])
	}
	vols := spec.Volumes
	if vols[0].DataVolume == nil || vols[1].CloudInitNoCloud == nil || vols[2].EmptyDisk == nil || vols[3].PersistentVolumeClaim == nil {
		t.Fatalf("volumes = %+v", vols)
	}
	if !vols[3].PersistentVolumeClaim.ReadOnly || vols[3].PersistentVolumeClaim.ClaimName != "shared-pvc" {
		t.Errorf("volumes[3] = %+v", vols[3].PersistentVolumeClaim)
	}
	if spec.PriorityClassName != "vm-high" || spec.Domain.CPU == nil || !spec.Domain.CPU.DedicatedCPUPlacement {
		t.Errorf("priorityClassName %q, cpu %+v", spec.PriorityClassName, spec.Domain.CPU)
	}
	f := spec.Domain.Features
	if f == nil || f.SMM == nil || f.APIC == nil || !f.APIC.EndOfInterrupt || f.Hyperv == nil ||
		f.Hyperv.Spinlocks == nil || *f.Hyperv.Spinlocks.Retries != 8191 || f.Hyperv.SyNICTimer.Direct == nil {
		t.Errorf("features = %+v", f)
	}
	if c := spec.Domain.Clock; c == nil || c.Timezone == nil || *c.Timezone != "Europe/Berlin" ||
		c.Timer.HPET.Enabled == nil || *c.Timer.HPET.Enabled || c.Timer.RTC.Track != corev1.TrackGuest {
		t.Errorf("clock = %+v", c)
	}
	if tpm := spec.Domain.Devices.TPM; tpm == nil || tpm.Persistent == nil || !*tpm.Persistent {
		t.Errorf("tpm = %+v", tpm)
	}
	if lun := disks[2].LUN; lun == nil || lun.Bus != corev1.DiskBusSCSI || !lun.Reservation {
		t.Errorf("disks[2] = %+v", disks[2])
	}
	if iface.BootOrder == nil || *iface.BootOrder != 2 {
		t.Errorf("interfaces[0].bootOrder = %v", iface.BootOrder)
	}
	if hd := vols[4].HostDisk; hd == nil || hd.Type != corev1.HostDiskExistsOrCreate || hd.Capacity.String() != "1Gi" {
		t.Errorf("volumes[4] = %+v", vols[4])
	}
	aa := spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0]
	if aa.Weight != 50 || aa.PodAffinityTerm.LabelSelector.MatchLabels["app"] != "demo" {
		t.Errorf("podAntiAffinity = %+v", aa)
	}
	if spec.Tolerations[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("tolerations = %+v", spec.Tolerations)
	}
}

// TestUnsupportedFieldsAreRejected checks that a field KubeVirt's API does not have is an
// "unknown field" error for strict clients rather than being silently dropped.
func TestUnsupportedFieldsAreRejected(t *testing.T) {
	for _, tc := range []struct{ old, new, field string }{
		// A misspelt field (KubeVirt's is dedicatedIOThread).
		{"            disk:\n              bus: virtio\n",
			"            disk:\n              bus: virtio\n            dedicatedIoThread: true\n", "dedicatedIoThread"},
		// Vireo's own top-level checksum moved to spec.source.http.checksum, where CDI has it.
		{"          checksum: sha256:00ff\n", "          checksum: sha256:00ff\n      checksum: sha256:00ff\n", "checksum"},
	} {
		manifest := strings.Replace(vmManifest, tc.old, tc.new, 1)
		if manifest == vmManifest {
			t.Fatalf("test manifest was not modified for %s", tc.field)
		}
		_, _, err := strictYAML(t).Decode([]byte(manifest), nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("decode error = %v, want an unknown field error naming %s", err, tc.field)
		}
	}
}
