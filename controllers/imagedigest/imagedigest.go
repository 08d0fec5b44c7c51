// Package imagedigest pins a VMI's images to digests before its launcher Pod is created: it
// asks each containerDisk's (and kernelBoot container's) registry, by a manifest HEAD request,
// which digest the VMI's tag names now, so that the Pod's image volumes name that digest. Every
// node then runs the same image for the VMI (a tag pulled on two nodes at different times can
// name two images), and a migration's target mounts exactly what its source runs. An image the
// registry does not answer for without credentials (a private image, a registry the controller
// cannot reach) keeps its tag: the kubelet pulls it as usual, with the Pod's pull secrets.
package imagedigest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

// Resolver resolves image tags to digests.
type Resolver struct {
	// Insecure are registries (host[:port]) reached over plain HTTP.
	Insecure []string
	// Timeout bounds each registry request (default 5 s).
	Timeout time.Duration
}

// Resolve returns image at the digest its registry says it names now (repository@sha256:...).
// A reference that already names a digest is returned as it is.
func (r *Resolver) Resolve(ctx context.Context, image string) (string, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", image, err)
	}
	if d, ok := ref.(name.Digest); ok {
		return d.String(), nil
	}
	for _, reg := range r.Insecure {
		if ref.Context().RegistryStr() == reg {
			if ref, err = name.ParseReference(image, name.Insecure); err != nil {
				return "", err
			}
		}
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	desc, err := remote.Head(ref, remote.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", image, err)
	}
	return launcherpod.ImageRepository(image) + "@" + desc.Digest.String(), nil
}

// Pin resolves the images of vmi that name no digest and have no pull secret, by volume name
// (and launcherpodapi.KernelBootVolumeName), for launcherpod.Options.PinnedImages. Images it
// cannot resolve are left out (logged): their Pods name the tag.
func (r *Resolver) Pin(ctx context.Context, vmi *v1.VirtualMachineInstance) map[string]string {
	out := map[string]string{}
	pin := func(key, image, secret string) {
		if secret != "" || strings.Contains(image, "@") {
			return
		}
		d, err := r.Resolve(ctx, image)
		if err != nil {
			klog.FromContext(ctx).Info("Cannot pin an image to its digest; the launcher Pod names the tag", "vmi", klog.KObj(vmi), "volume", key, "err", err)
			return
		}
		out[key] = d
	}
	for _, vol := range vmi.Spec.Volumes {
		if cd := vol.ContainerDisk; cd != nil {
			pin(vol.Name, cd.Image, cd.ImagePullSecret)
		}
	}
	if fw := vmi.Spec.Domain.Firmware; fw != nil && fw.KernelBoot != nil && fw.KernelBoot.Container != nil {
		kb := fw.KernelBoot.Container
		pin(launcherpodapi.KernelBootVolumeName, kb.Image, kb.ImagePullSecret)
	}
	return out
}
