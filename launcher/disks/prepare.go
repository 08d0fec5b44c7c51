package disks

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
)

// NodeVolumes are where the launcher Pod mounts what a VMI's volumes refer to: images, claims
// and the data of referenced Secrets.
type NodeVolumes struct {
	// ContainerDisksDir is where each containerDisk volume's image is mounted, read-only, at
	// ContainerDisksDir/<volume name> (protocol.ContainerDisksDir).
	ContainerDisksDir string
	// ClaimsDir is where the claims of persistentVolumeClaim and dataVolume volumes are
	// mounted, each at ClaimsDir/<volume name> (KubeVirt's /var/run/kubevirt-private/vmi-disks).
	ClaimsDir string
	// CloudInitSecrets maps cloudInitNoCloud volumes to the data of the Secrets they refer to,
	// when the caller has it (tests, benchmarks); a volume it leaves out is read from SecretsDir.
	CloudInitSecrets map[string]ResolvedSecrets
	// SecretsDir is where the launcher Pod mounts the Secrets the VMI's volumes refer to
	// (protocol.SecretsDir), each at SecretsDir/<volume name>/<use>.
	SecretsDir string
	// ConfigVolumesDir is where the launcher Pod mounts the data of the VMI's configMap,
	// secret, serviceAccount and downwardAPI volumes (protocol.ConfigVolumesDir), each at
	// ConfigVolumesDir/<volume name>.
	ConfigVolumesDir string
	// AccessCredentialsDir is where the launcher Pod mounts the Secrets of the VMI's access
	// credentials (protocol.AccessCredentialsDir), each at protocol.AccessCredentialMountName(index).
	AccessCredentialsDir string
}

// PrepareVolumes prepares every volume of vmi and returns them by name, ready for
// domain.Inputs.Disks. Each failure names its volume by field path; all are reported together.
func (p *Preparer) PrepareVolumes(ctx context.Context, vmi *v1.VirtualMachineInstance, node NodeVolumes) (map[string]domain.DiskSource, error) {
	out := map[string]domain.DiskSource{}
	var errs []error
	for i := range vmi.Spec.Volumes {
		vol := &vmi.Spec.Volumes[i]
		src, err := p.prepareVolume(ctx, vmi, i, node)
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
func (p *Preparer) prepareVolume(ctx context.Context, vmi *v1.VirtualMachineInstance, index int, node NodeVolumes) (domain.DiskSource, error) {
	vol := &vmi.Spec.Volumes[index]
	switch {
	case vol.ContainerDisk != nil:
		if err := checkVolumeName(vol.Name); err != nil {
			return domain.DiskSource{}, err
		}
		if node.ContainerDisksDir == "" {
			return domain.DiskSource{}, errors.New("the launcher knows no directory its containerDisk images are mounted in")
		}
		return p.ContainerDisk(ctx, vol.Name, filepath.Join(node.ContainerDisksDir, vol.Name), vol.ContainerDisk.Path)
	case vol.EmptyDisk != nil:
		return p.EmptyDisk(ctx, vol.Name, vol.EmptyDisk.Capacity)
	case vol.CloudInitNoCloud != nil || vol.CloudInitConfigDrive != nil:
		secrets, err := node.cloudInitSecrets(vol)
		if err != nil {
			return domain.DiskSource{}, err
		}
		data, err := NoCloudFromVolume(vmi, vol, secrets)
		if err != nil {
			return domain.DiskSource{}, err
		}
		if data.PublicKeys, err = cloudInitPublicKeys(vmi, vol.CloudInitConfigDrive != nil, node.AccessCredentialsDir); err != nil {
			return domain.DiskSource{}, err
		}
		if vol.CloudInitConfigDrive != nil {
			return p.CloudInitConfigDrive(ctx, vol.Name, data)
		}
		return p.CloudInitNoCloud(ctx, vol.Name, data)
	case vol.ConfigMap != nil || vol.Secret != nil || vol.ServiceAccount != nil || vol.DownwardAPI != nil:
		if err := checkVolumeName(vol.Name); err != nil {
			return domain.DiskSource{}, err
		}
		if node.ConfigVolumesDir == "" {
			return domain.DiskSource{}, errors.New("the launcher knows no directory its config volumes are mounted in")
		}
		return p.ConfigVolume(ctx, vol.Name, filepath.Join(node.ConfigVolumesDir, vol.Name), configVolumeLabel(vol))
	case vol.PersistentVolumeClaim != nil || vol.DataVolume != nil:
		if err := checkVolumeName(vol.Name); err != nil {
			return domain.DiskSource{}, err
		}
		if node.ClaimsDir == "" {
			return domain.DiskSource{}, errors.New("the launcher knows no directory its claims are mounted in")
		}
		readOnly := vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ReadOnly
		return p.PersistentVolume(ctx, filepath.Join(node.ClaimsDir, vol.Name), readOnly, index)
	case vol.HostDisk != nil:
		return domain.DiskSource{}, errors.New("hostDisk volumes are not supported by Vireo's launcher yet")
	}
	return domain.DiskSource{}, errors.New("the volume has no source Vireo's launcher knows")
}
