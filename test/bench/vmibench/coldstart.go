package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	crv1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/test/images"
)

// A cold start is a containerDisk VMI's first start on a node that has never pulled its image:
// the kubelet pulls the image volume (containerd fetches, verifies and unpacks the layer)
// before the launcher Pod starts. Each run pushes a containerDisk no node has (tiny's disk with
// one block of its own, so a layer digest of its own) to vireo-local's registry, times crane's
// pull of it (go-containerregistry fetching every blob into a fresh OCI layout: what
// `crane pull --format=oci` does, with nothing cached) and of unpacking it into a directory (what
// containerd's snapshotter does after a pull), then creates one VMI with it and times
// creation -> Running. The warm 1-VMI run's creation -> Running is the same start without the
// pull, so cold - warm is what the pull costs through the kubelet, against crane's pull.

// coldStartResult is the cold starts.
type coldStartResult struct {
	Runs int `json:"runs"`
	// LayerBytes is the compressed size of the containerDisk's layer.
	LayerBytes int64 `json:"layerBytes"`
	// CreateToRunning is the cold VMIs' creation -> Running; CranePull is crane's pull;
	// CraneUnpack is unpacking what it pulled into a directory, as containerd's snapshotter
	// does after its pull (crane export's work: decompress, untar, write the files).
	CreateToRunning durations `json:"creationToRunning"`
	CranePull       durations `json:"cranePull"`
	CraneUnpack     durations `json:"craneUnpack"`
}

// coldStarts measures runs cold starts, one VMI at a time.
func (e *env) coldStarts(ctx context.Context, runs int) (coldStartResult, error) {
	res := coldStartResult{Runs: runs}
	var vmis, pulls, unpacks []time.Duration
	stamp := time.Now().UnixNano()
	for i := range runs {
		ref := fmt.Sprintf("%s/vmibench/cold-%d-%d:latest", e.cluster.RegistryAddress(), stamp, i)
		size, err := pushUniqueContainerDisk(e.c.containerDiskFile(), ref, i)
		if err != nil {
			return res, err
		}
		res.LayerBytes = size
		pull, unpack, err := cranePull(ctx, ref)
		if err != nil {
			return res, err
		}
		say("cold-%d: crane pull %.2f s, unpack %.2f s; creating a VMI with the image", i, pull.Seconds(), unpack.Seconds())
		start, err := e.coldVMI(ctx, fmt.Sprintf("cold-%d", i), ref)
		if err != nil {
			return res, fmt.Errorf("cold start %d: %w", i, err)
		}
		vmis, pulls, unpacks = append(vmis, start), append(pulls, pull), append(unpacks, unpack)
	}
	res.CreateToRunning, res.CranePull, res.CraneUnpack = summarize(vmis), summarize(pulls), summarize(unpacks)
	return res, nil
}

// pushUniqueContainerDisk pushes a containerDisk of disk with block 2+salt overwritten (a
// layer no node has) as ref and returns its layer's compressed size.
func pushUniqueContainerDisk(disk, ref string, salt int) (int64, error) {
	dir, err := os.MkdirTemp("", "vmibench-cold")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	copyPath := filepath.Join(dir, "disk.qcow2")
	if out, err := exec.Command("cp", "--sparse=always", disk, copyPath).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("copying %s: %v: %s", disk, err, out)
	}
	pattern := fmt.Sprintf("write -P %d %d 4096", 1+(time.Now().Nanosecond()+salt)%250, (2+salt)*4096)
	if out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", pattern, copyPath).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("qemu-io: %v: %s", err, out)
	}
	img, err := images.ContainerDiskImage(copyPath, dir)
	if err != nil {
		return 0, err
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return 0, err
	}
	if err := remote.Write(r, img); err != nil {
		return 0, fmt.Errorf("pushing %s: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) == 0 {
		return 0, fmt.Errorf("the containerDisk has no layer: %v", err)
	}
	return layers[0].Size()
}

// cranePull fetches ref with every blob into a fresh OCI layout, then unpacks the image's
// file system from the layout into a directory, and returns how long each took.
func cranePull(ctx context.Context, ref string) (pull, unpack time.Duration, err error) {
	dir, err := os.MkdirTemp("", "vmibench-crane")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return 0, 0, err
	}
	began := time.Now()
	img, err := remote.Image(r, remote.WithContext(ctx))
	if err != nil {
		return 0, 0, fmt.Errorf("crane pull %s: %w", ref, err)
	}
	p, err := layout.Write(filepath.Join(dir, "layout"), empty.Index)
	if err == nil {
		err = p.AppendImage(img)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("crane pull %s: %w", ref, err)
	}
	pull = time.Since(began)
	if err := verifyLayout(p, img); err != nil {
		return 0, 0, err
	}
	began = time.Now()
	if err := unpackFromLayout(p, img, filepath.Join(dir, "rootfs")); err != nil {
		return 0, 0, err
	}
	return pull, time.Since(began), nil
}

// unpackFromLayout writes the regular files and directories of img's flattened file system,
// read from layout p, below dir.
func unpackFromLayout(p layout.Path, img crv1.Image, dir string) error {
	d, err := img.Digest()
	if err != nil {
		return err
	}
	local, err := p.Image(d)
	if err != nil {
		return err
	}
	rc := mutate.Extract(local)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpacking: %w", err)
		}
		target := filepath.Join(dir, filepath.Clean("/"+hdr.Name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			err = writeUnpacked(target, tr)
		}
		if err != nil {
			return err
		}
	}
}

func writeUnpacked(path string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// verifyLayout checks that the layout holds img's layers (the pull was complete).
func verifyLayout(p layout.Path, img crv1.Image) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(string(p), "blobs", d.Algorithm, d.Hex)); err != nil {
			return fmt.Errorf("crane pull left out layer %s: %w", d, err)
		}
	}
	return nil
}

// coldVMI creates VMI name with containerDisk image, waits until it runs, deletes it and
// waits until it is gone, and returns creation -> Running (as polled every 20 ms).
func (e *env) coldVMI(ctx context.Context, name, image string) (time.Duration, error) {
	vmi := e.template.DeepCopy()
	vmi.Name, vmi.Namespace = name, benchNS
	for i := range vmi.Spec.Volumes {
		if cd := vmi.Spec.Volumes[i].ContainerDisk; cd != nil {
			cd.Image = image
		}
	}
	client := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS)
	created := time.Now()
	if _, err := client.Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	defer func() {
		dctx := context.WithoutCancel(ctx)
		_ = client.Delete(dctx, name, metav1.DeleteOptions{})
		_ = wait.PollUntilContextTimeout(dctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := client.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}()
	var running time.Time
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, e.c.startTimeout, true, func(ctx context.Context) (bool, error) {
		got, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		switch got.Status.Phase {
		case v1.Running:
			running = time.Now()
			return true, nil
		case v1.Failed:
			return false, errors.New("the VMI failed: " + got.Status.Reason)
		}
		return false, nil
	})
	if err != nil {
		return 0, err
	}
	return running.Sub(created), nil
}
