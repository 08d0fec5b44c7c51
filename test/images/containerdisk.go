package images

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// A KubeVirt containerDisk is an image whose only content is the disk under /disk, readable
// by the qemu user (uid and gid 107) and no one else: KubeVirt's own are built with
// `ADD --chown=107:107 disk.qcow2 /disk/` and mode 0440.
const (
	ContainerDiskPath = "disk/disk.qcow2"
	containerDiskUID  = 107
	containerDiskMode = 0o440
)

// RefNameAnnotation is the OCI layout index annotation naming the image's tag.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// containerDiskTar writes the layer's tar: the /disk directory and the disk in it, with
// fixed times so the same disk gives the same layer.
func containerDiskTar(w io.Writer, disk string) error {
	f, err := os.Open(disk)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	epoch := time.Unix(0, 0)
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "disk/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: ContainerDiskPath, Mode: containerDiskMode, Size: fi.Size(),
		Uid: containerDiskUID, Gid: containerDiskUID, ModTime: epoch, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return err
	}
	return tw.Close()
}

// ContainerDiskImage is the containerDisk image of the qcow2 file disk: one gzip layer holding it
// at ContainerDiskPath, OCI media types, linux/amd64. The layer's tar is staged in tmpDir.
func ContainerDiskImage(disk, tmpDir string) (v1.Image, error) {
	tarPath := filepath.Join(tmpDir, "containerdisk-layer.tar")
	f, err := os.Create(tarPath)
	if err != nil {
		return nil, err
	}
	if err := containerDiskTar(f, disk); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the containerDisk layer: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return singleLayerImage(tarPath)
}

// singleLayerImage is an image of the one layer in the tar at tarPath: OCI media types, linux/amd64.
func singleLayerImage(tarPath string) (v1.Image, error) {
	layer, err := tarball.LayerFromFile(tarPath, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	return mutate.AppendLayers(img, layer)
}

// writeContainerDisk writes the containerDisk of disk as an OCI image layout in dir, tagged
// latest, and returns the image's manifest digest. The layer's tar is staged in tmpDir.
func writeContainerDisk(dir, disk, tmpDir string) (v1.Hash, error) {
	img, err := ContainerDiskImage(disk, tmpDir)
	if err != nil {
		return v1.Hash{}, err
	}
	return writeLayout(dir, img)
}

// writeLayout writes img as an OCI image layout in dir, tagged latest, and returns its digest.
func writeLayout(dir string, img v1.Image) (v1.Hash, error) {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: "latest"})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the image layout %s: %w", dir, err)
	}
	return img.Digest()
}
