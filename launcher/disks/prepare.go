package disks

import (
	"context"
	"errors"
	"fmt"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
)

// NodeVolumes are what the node agent resolved about a VMI's volumes and the launcher passes
// on: where images and claims are on the node, and the data of referenced Secrets.
type NodeVolumes struct {
	// ImageCache is the root of the node's read-only containerDisk image cache.
	ImageCache string
	// ContainerDisks maps each containerDisk volume to its disk image's path relative to
	// ImageCache.
	ContainerDisks map[string]string
	// ClaimMounts maps each persistentVolumeClaim and dataVolume volume to the directory its
	// claim is mounted at.
	ClaimMounts map[string]string
	// CloudInitSecrets maps cloudInitNoCloud volumes to the data of the Secrets they refer to.
	CloudInitSecrets map[string]ResolvedSecrets
}

// PrepareVolumes prepares every volume of vmi and returns them by name, ready for
// domain.Inputs.Disks. Each failure names its volume by field path; all are reported together.
func (p *Preparer) PrepareVolumes(ctx context.Context, vmi *v1.VirtualMachineInstance, node NodeVolumes) (map[string]domain.DiskSource, error) {
	out := map[string]domain.DiskSource{}
	var errs []error
	for i := range vmi.Spec.Volumes {
		vol := &vmi.Spec.Volumes[i]
		src, err := p.prepareVolume(ctx, vmi, vol, node)
		if err != nil {
			errs = append(errs, fmt.Errorf("spec.volumes[%d] (%q): %w", i, vol.Name, err))
			continue
		}
		out[vol.Name] = src
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// prepareVolume prepares one volume by its source.
func (p *Preparer) prepareVolume(ctx context.Context, vmi *v1.VirtualMachineInstance, vol *v1.Volume, node NodeVolumes) (domain.DiskSource, error) {
	switch {
	case vol.ContainerDisk != nil:
		image, ok := node.ContainerDisks[vol.Name]
		if !ok {
			return domain.DiskSource{}, fmt.Errorf("the node agent gave no cached image for containerDisk %s", vol.ContainerDisk.Image)
		}
		return p.ContainerDisk(ctx, vol.Name, node.ImageCache, image)
	case vol.EmptyDisk != nil:
		return p.EmptyDisk(ctx, vol.Name, vol.EmptyDisk.Capacity)
	case vol.CloudInitNoCloud != nil:
		data, err := NoCloudFromVolume(vmi, vol.Name, vol.CloudInitNoCloud, node.CloudInitSecrets[vol.Name])
		if err != nil {
			return domain.DiskSource{}, err
		}
		return p.CloudInitNoCloud(ctx, vol.Name, data)
	case vol.PersistentVolumeClaim != nil || vol.DataVolume != nil:
		mount, ok := node.ClaimMounts[vol.Name]
		if !ok {
			return domain.DiskSource{}, errors.New("the node agent gave no mount directory for its claim")
		}
		readOnly := vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ReadOnly
		return p.PersistentVolume(ctx, mount, readOnly)
	case vol.HostDisk != nil:
		return domain.DiskSource{}, errors.New("hostDisk volumes are not supported by Vireo's launcher yet")
	}
	return domain.DiskSource{}, errors.New("the volume has no source Vireo's launcher knows")
}
