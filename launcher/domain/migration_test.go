package domain

import (
	"strings"
	"testing"
)

func TestLocalDisks(t *testing.T) {
	xml := `<domain type='qemu'><name>x</name><devices>
<disk type='file' device='disk'><source file='/var/run/vireo-private/disks/root.qcow2'/><target dev='vda' bus='virtio'/></disk>
<disk type='file' device='disk'><source file='/var/run/kubevirt-private/vmi-disks/data/disk.img'/><target dev='vdb' bus='virtio'/></disk>
<disk type='file' device='cdrom'><source file='/var/run/vireo-private/disks/cloudinit.iso'/><target dev='sda' bus='sata'/><readonly/></disk>
<disk type='file' device='disk'><source file='/var/run/vireo-private/disks/scratch.qcow2'/><target dev='vdc' bus='virtio'/></disk>
</devices></domain>`
	got, err := LocalDisks(xml, "/var/run/vireo-private")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "vda,vdc" {
		t.Errorf("LocalDisks = %v, want [vda vdc]", got)
	}
}
