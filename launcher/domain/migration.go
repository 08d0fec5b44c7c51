package domain

import (
	"fmt"
	"path/filepath"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// LocalDisks are the target devices (vda, ...) of the disks a live migration of the domain
// must copy: writable file disks in dir, the launcher's private directory (containerDisk
// overlays, emptyDisks). Claims are on shared storage, and cloud-init and other read-only
// disks the target builds itself.
func LocalDisks(domainXML, dir string) ([]string, error) {
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(domainXML); err != nil {
		return nil, fmt.Errorf("reading the domain's XML: %w", err)
	}
	if dom.Devices == nil {
		return nil, nil
	}
	var out []string
	prefix := filepath.Clean(dir) + "/"
	for _, d := range dom.Devices.Disks {
		if d.Device != "disk" || d.ReadOnly != nil || d.Target == nil || d.Source == nil || d.Source.File == nil {
			continue
		}
		if strings.HasPrefix(d.Source.File.File, prefix) {
			out = append(out, d.Target.Dev)
		}
	}
	return out, nil
}
