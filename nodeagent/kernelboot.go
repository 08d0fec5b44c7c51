package nodeagent

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// kernelBootDir is the directory, in an image's digest directory, of the files extracted from
// the image for spec.domain.firmware.kernelBoot. Each file is named after the SHA-256 of its
// clean path in the image: a name the node agent builds, so two VMIs that boot different
// kernels of one image share the image but not the file, and no user string names a host path.
const kernelBootDir = "kernelboot"

// maxKernelBootFile bounds the size of a kernel or initrd taken from an image; a larger entry
// is refused rather than filling the node's disk. (A variable only so tests can lower it.)
var maxKernelBootFile int64 = 512 << 20

// ReasonKernelBootImageInvalid is the reason of a VMI that failed because its kernelBoot image
// lacks a file it names (or holds something else there): an image digest never changes, so
// retrying cannot help.
const ReasonKernelBootImageInvalid = "KernelBootImageInvalid"

// permanentError is a handover failure that retrying cannot cure; the VMI fails with reason.
type permanentError struct {
	reason string
	err    error
}

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// kernelBoot returns the kernel and initrd of a kernelBoot container in the node's image cache,
// pulling the image as its pull policy says and extracting the files once per image digest
// (concurrent VMIs share them). opts are passed to the registry client (credentials, when the
// VMI has image pull secrets). A file the image lacks is a *permanentError.
func (c *imageCache) kernelBoot(ctx context.Context, kb *v1.KernelBootContainer, opts ...remote.Option) (*protocol.KernelBootFiles, error) {
	want, err := kernelBootWants(kb)
	if err != nil {
		return nil, err
	}
	ref, err := c.parse(kb.Image)
	if err != nil {
		return nil, &permanentError{ReasonKernelBootImageInvalid, fmt.Errorf("kernelBoot image %q: %w", kb.Image, err)}
	}
	lock := c.pullLock(ref.Name())
	lock.Lock()
	defer lock.Unlock()
	policy := pullPolicy(ref, kb.ImagePullPolicy)
	if policy != v1.PullAlways {
		if dir, ok := c.indexedDir(ref); ok && haveAll(dir, want) {
			return kernelBootFiles(dir, kb), nil
		}
		if policy == v1.PullNever {
			return nil, fmt.Errorf("kernelBoot image %q (or its files) is not on this node and its imagePullPolicy is Never", kb.Image)
		}
	}
	desc, err := remote.Get(ref, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("pulling kernelBoot image %q: %w", kb.Image, err)
	}
	digestDir := filepath.Join(c.dir, "sha256-"+desc.Digest.Hex)
	if err := c.recordTag(ref, digestDir); err != nil {
		return nil, err
	}
	if haveAll(digestDir, want) {
		return kernelBootFiles(digestDir, kb), nil
	}
	img, err := desc.Image()
	if err != nil {
		return nil, fmt.Errorf("kernelBoot image %q: %w", kb.Image, err)
	}
	if err := c.extractFiles(mutate.Extract(img), kb.Image, want, digestDir); err != nil {
		return nil, err
	}
	return kernelBootFiles(digestDir, kb), nil
}

// kernelBootWants are the clean paths (without the leading "/") the container names.
func kernelBootWants(kb *v1.KernelBootContainer) ([]string, error) {
	var want []string
	for _, p := range []struct{ field, value string }{{"kernelPath", kb.KernelPath}, {"initrdPath", kb.InitrdPath}} {
		if p.value == "" {
			continue
		}
		rel, err := imagePath(p.value)
		if err != nil {
			return nil, &permanentError{ReasonKernelBootImageInvalid,
				fmt.Errorf("spec.domain.firmware.kernelBoot.container.%s: %w", p.field, err)}
		}
		want = append(want, rel)
	}
	if len(want) == 0 {
		return nil, &permanentError{ReasonKernelBootImageInvalid,
			errors.New("spec.domain.firmware.kernelBoot.container names neither kernelPath nor initrdPath")}
	}
	return want, nil
}

// imagePath cleans an absolute path in an image to the form of a tar entry's name (no leading
// "/"), refusing relative paths, ".." and the root itself.
func imagePath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%q must be an absolute path in the image", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("%q may not contain \"..\"", p)
		}
	}
	rel := strings.TrimPrefix(path.Clean(p), "/")
	if rel == "" {
		return "", fmt.Errorf("%q names the image's root directory, not a file", p)
	}
	return rel, nil
}

// cacheName is the file name of the image file at rel in kernelBootDir.
func cacheName(rel string) string {
	sum := sha256.Sum256([]byte("/" + rel))
	return hex.EncodeToString(sum[:])
}

// kernelBootFiles are the cached files of kb in digestDir.
func kernelBootFiles(digestDir string, kb *v1.KernelBootContainer) *protocol.KernelBootFiles {
	files := &protocol.KernelBootFiles{}
	if rel, err := imagePath(kb.KernelPath); err == nil && kb.KernelPath != "" {
		files.Kernel = filepath.Join(digestDir, kernelBootDir, cacheName(rel))
	}
	if rel, err := imagePath(kb.InitrdPath); err == nil && kb.InitrdPath != "" {
		files.Initrd = filepath.Join(digestDir, kernelBootDir, cacheName(rel))
	}
	return files
}

// haveAll reports whether every wanted file is extracted in digestDir already.
func haveAll(digestDir string, want []string) bool {
	for _, rel := range want {
		fi, err := os.Lstat(filepath.Join(digestDir, kernelBootDir, cacheName(rel)))
		if err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// pullPolicy is the policy a pull follows: the one set, else KubeVirt's default (Always for
// the "latest" tag or none, else IfNotPresent).
func pullPolicy(ref name.Reference, policy v1.PullPolicy) v1.PullPolicy {
	if policy != "" {
		return policy
	}
	if tag, ok := ref.(name.Tag); ok && tag.TagStr() == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// indexedDir is the digest directory a reference was last pulled as (its own, for a digest).
func (c *imageCache) indexedDir(ref name.Reference) (string, bool) {
	if d, ok := ref.(name.Digest); ok {
		return filepath.Join(c.dir, "sha256-"+strings.TrimPrefix(d.DigestStr(), "sha256:")), true
	}
	data, err := os.ReadFile(c.tagFile(ref))
	if err != nil {
		return "", false
	}
	return filepath.Join(c.dir, filepath.Base(strings.TrimSpace(string(data)))), true
}

// found is what the flattened file system holds at one wanted path: the last entry wins, as
// when the image's file system is unpacked.
type found struct {
	tmp     string // the extracted file, when the last entry was a regular file
	problem string // why the last entry cannot be used
}

// extractFiles copies the wanted files from an image's flattened file system (fs, from
// mutate.Extract: upper layers already hide lower ones) into digestDir/kernelboot, each under
// its cacheName, appearing only complete. Only regular files are taken: a symlink, hard link,
// directory or device at a wanted path is refused, as is a file larger than maxKernelBootFile.
func (c *imageCache) extractFiles(fs io.ReadCloser, image string, want []string, digestDir string) error {
	defer fs.Close()
	tmp, err := os.MkdirTemp(c.dir, ".kernelboot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	got := map[string]*found{}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	tr := tar.NewReader(fs)
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// mutate.Extract ends the tar before it reports why it stopped (a layer that failed
			// to download, an unsafe entry): only the rest of the stream says whether the
			// file system was complete, and so whether a file is really missing.
			_, err = io.Copy(io.Discard, fs)
		}
		if err != nil {
			return fmt.Errorf("reading kernelBoot image %q: %w", image, err)
		}
		if hdr == nil {
			break
		}
		file := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if !wanted[file] {
			continue
		}
		f := &found{}
		switch {
		case hdr.Typeflag == tar.TypeSymlink:
			f.problem = fmt.Sprintf("is a symlink (to %s), which Vireo does not follow: name the file it points to", hdr.Linkname)
		case hdr.Typeflag == tar.TypeLink:
			f.problem = fmt.Sprintf("is a hard link (to /%s): name that file instead", strings.TrimPrefix(hdr.Linkname, "/"))
		case hdr.Typeflag != tar.TypeReg:
			f.problem = "is not a regular file"
		case hdr.Size > maxKernelBootFile:
			f.problem = fmt.Sprintf("is %d bytes, more than the %d a kernel or initrd may have", hdr.Size, maxKernelBootFile)
		default:
			f.tmp = filepath.Join(tmp, fmt.Sprintf("%d", n))
			if err := writeFile(f.tmp, io.LimitReader(tr, maxKernelBootFile)); err != nil {
				return fmt.Errorf("extracting /%s from kernelBoot image %q: %w", file, image, err)
			}
		}
		got[file] = f
	}
	for _, w := range want {
		f := got[w]
		switch {
		case f == nil:
			return &permanentError{ReasonKernelBootImageInvalid,
				fmt.Errorf("kernelBoot image %q has no file /%s (directories that are symlinks are not followed)", image, w)}
		case f.problem != "":
			return &permanentError{ReasonKernelBootImageInvalid, fmt.Errorf("/%s in kernelBoot image %q %s", w, image, f.problem)}
		}
	}
	dir := filepath.Join(digestDir, kernelBootDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, w := range want {
		if err := os.Rename(got[w].tmp, filepath.Join(dir, cacheName(w))); err != nil {
			return err
		}
	}
	return nil
}

// placeDisk moves a containerDisk extracted in tmp (tmp/disk) into place: tmp becomes the digest
// directory, or, when that exists already (another pull finished first, or the image's
// kernelBoot files are there), the disk moves into it.
func placeDisk(tmp, digestDir string) error {
	err := os.Rename(tmp, digestDir)
	if err == nil || !errors.Is(err, os.ErrExist) && !isNotEmpty(err) {
		return err
	}
	if _, err := os.Lstat(filepath.Join(digestDir, diskFile)); err == nil {
		return nil
	}
	return os.Rename(filepath.Join(tmp, diskFile), filepath.Join(digestDir, diskFile))
}
