package images

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The guest's kernelBoot image (spec.domain.firmware.kernelBoot.container): an OCI layout in
// <guest>/kernelboot holding only the guest's kernel and initramfs, at KernelBootKernelPath and
// KernelBootInitrdPath. It is derived from the built kernel and initramfs, and rebuilt only when
// they (or kernelBootVersion) change; KernelBootKeyFile beside the layout records from what.
const (
	KernelBootDir        = "kernelboot"
	KernelBootKeyFile    = "kernelboot.key"
	KernelBootKernelPath = "/boot/vmlinuz"
	KernelBootInitrdPath = "/boot/initrd.img"
	// kernelBootVersion is part of the layout's key: bump it when the layout's making changes.
	kernelBootVersion = 1
)

// kernelBootKey digests what the kernelBoot layout of the guest in dir is made from.
func kernelBootKey(m Manifest) (string, error) {
	k, kok := m.Files[Kernel]
	i, iok := m.Files[Initrd]
	if !kok || !iok {
		return "", fmt.Errorf("the guest's manifest lists no %s or %s", Kernel, Initrd)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "v%d kernel=%s initrd=%s", kernelBootVersion, k.SHA256, i.SHA256))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// ensureKernelBoot (re)writes the kernelBoot layout of the guest in dir unless the one there was
// made from the same kernel and initramfs. It reports whether it wrote one. Scratch files go to
// work; the layout appears only complete.
func ensureKernelBoot(dir, work string, m Manifest) (bool, error) {
	key, err := kernelBootKey(m)
	if err != nil {
		return false, err
	}
	keyFile := filepath.Join(dir, KernelBootKeyFile)
	if data, err := os.ReadFile(keyFile); err == nil && strings.TrimSpace(string(data)) == key {
		if _, err := os.Stat(filepath.Join(dir, KernelBootDir, "index.json")); err == nil {
			return false, nil
		}
	}
	tmp, err := os.MkdirTemp(work, "kernelboot-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	tarPath := filepath.Join(tmp, "layer.tar")
	if err := writeKernelBootTar(tarPath, filepath.Join(dir, Kernel), filepath.Join(dir, Initrd)); err != nil {
		return false, fmt.Errorf("writing the kernelBoot layer: %w", err)
	}
	img, err := singleLayerImage(tarPath)
	if err != nil {
		return false, err
	}
	stage := filepath.Join(tmp, KernelBootDir)
	if _, err := writeLayout(stage, img); err != nil {
		return false, err
	}
	final := filepath.Join(dir, KernelBootDir)
	if err := os.RemoveAll(final); err != nil {
		return false, err
	}
	if err := os.Rename(stage, final); err != nil {
		return false, err
	}
	return true, writeFileAtomic(keyFile, []byte(key+"\n"))
}

// writeKernelBootTar writes the layer: /boot with the kernel and initramfs in it, owned by root
// and world-readable, with fixed times so the same files give the same layer.
func writeKernelBootTar(tarPath, kernel, initrd string) error {
	f, err := os.Create(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	epoch := time.Unix(0, 0)
	tw := tar.NewWriter(f)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "boot/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return err
	}
	for _, file := range []struct{ src, name string }{{kernel, KernelBootKernelPath}, {initrd, KernelBootInitrdPath}} {
		if err := addFile(tw, file.src, strings.TrimPrefix(file.name, "/"), epoch); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// addFile adds the regular file src to tw as name.
func addFile(tw *tar.Writer, src, name string, mtime time.Time) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New(src + " is not a regular file")
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: fi.Size(), ModTime: mtime, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, in)
	return err
}
