package domain

import (
	"strings"
	"testing"
)

func TestMigrationDisks(t *testing.T) {
	xml := `<domain type='qemu'><name>x</name><devices>
<disk type='file' device='disk'><source file='/var/run/vireo-private/disks/root.qcow2'/><target dev='vda' bus='virtio'/></disk>
<disk type='file' device='disk'><source file='/var/run/kubevirt-private/vmi-disks/data/disk.img'/><target dev='vdb' bus='virtio'/></disk>
<disk type='file' device='cdrom'><source file='/var/run/vireo-private/disks/cloudinit.iso'/><target dev='sda' bus='sata'/><readonly/></disk>
<disk type='file' device='disk'><source file='/var/run/vireo-private/disks/scratch.qcow2'/><target dev='vdc' bus='virtio'/></disk>
<disk type='file' device='disk'><source file='/proc/1/fd/1003'/><target dev='vdd' bus='virtio'/></disk>
</devices></domain>`
	copied, shared, err := MigrationDisks(xml, "/var/run/vireo-private", "/var/run/kubevirt-private/vmi-disks", "/proc/1/fd")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(copied, ",") != "vda,vdc" || strings.Join(shared, ",") != "vdb,vdd" {
		t.Errorf("MigrationDisks = %v, %v; want [vda vdc], [vdb vdd]", copied, shared)
	}
	other := strings.Replace(xml, "/var/run/kubevirt-private/vmi-disks/data/disk.img", "/srv/disk.img", 1)
	if _, _, err := MigrationDisks(other, "/var/run/vireo-private", "/var/run/kubevirt-private/vmi-disks", "/proc/1/fd"); err == nil || !strings.Contains(err.Error(), "vdb") {
		t.Errorf("a writable disk neither local nor a claim: %v, want an error naming vdb", err)
	}
}
