package images

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/vireo-dev/vireo/imagebuild/debian"
)

// BuilderVersion is part of the cache key: bump it when the build changes in a way the
// other inputs (packages, guest files, module list, command line) do not show, such as how
// the disk or the containerDisk is made.
const BuilderVersion = 2

// Manifest describes a built guest (<out>/<guest>/manifest.json): what it was built from
// and the sha256 of every output file.
type Manifest struct {
	// Key digests every input; a build whose key matches is not redone.
	Key            string    `json:"key"`
	BuilderVersion int       `json:"builderVersion"`
	Packages       []Package `json:"packages"`
	KernelCmdline  string    `json:"kernelCmdline"`
	// Modules are the kernel modules in the initramfs, in load order.
	Modules []string `json:"modules"`
	// Files maps each output file's path (relative to the guest's directory, slash-separated)
	// to its digest and size.
	Files map[string]File `json:"files"`
	// ContainerDisk is the image in the containerdisk/ OCI layout.
	ContainerDisk ContainerDisk `json:"containerDisk"`
}

// File is one output file's sha256 (hex) and size.
type File struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// ContainerDisk names the image of the OCI layout.
type ContainerDisk struct {
	// Layout is the layout's directory, relative to the guest's.
	Layout string `json:"layout"`
	Tag    string `json:"tag"`
	// Digest is the image manifest's digest (sha256:...).
	Digest string `json:"digest"`
	// DiskPath is the disk's path inside the image.
	DiskPath string `json:"diskPath"`
}

// keyInputs is everything a guest is built from.
type keyInputs struct {
	BuilderVersion int               `json:"builderVersion"`
	Packages       []Package         `json:"packages"`
	KernelCmdline  string            `json:"kernelCmdline"`
	Modules        []string          `json:"modules"`
	GuestFiles     map[string]string `json:"guestFiles"` // name -> sha256
}

// currentInputs are the inputs of a build from pkgs with this builder.
func currentInputs(pkgs []Package) keyInputs {
	in := keyInputs{BuilderVersion: BuilderVersion, Packages: pkgs, KernelCmdline: KernelCmdline,
		Modules: guestModules, GuestFiles: map[string]string{}}
	_ = fs.WalkDir(guestFiles, "guest", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := guestFiles.ReadFile(p)
			sum := sha256.Sum256(b)
			in.GuestFiles[p] = hex.EncodeToString(sum[:])
		}
		return nil
	})
	return in
}

// cacheKey digests the inputs. Packages count by name, version and .deb digest, in any order.
func cacheKey(in keyInputs) string {
	pkgs := make([]Package, len(in.Packages))
	for i, p := range in.Packages {
		pkgs[i] = Package{Name: p.Name, Version: p.Version, Arch: p.Arch, SHA256: p.SHA256}
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name < pkgs[j].Name })
	in.Packages = pkgs
	b, err := json.Marshal(in) // map keys are sorted, so the encoding is stable
	if err != nil {
		panic(err) // plain strings and ints
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// readManifest reads dir's manifest.json.
func readManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return m, nil
}

// upToDate reports whether dir holds a build with key whose files are all present with
// their recorded sizes (a cheap check: nothing is hashed).
func upToDate(dir, key string) (Manifest, bool) {
	m, err := readManifest(dir)
	if err != nil || m.Key != key || len(m.Files) == 0 {
		return m, false
	}
	for name, f := range m.Files {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || fi.Size() != f.Size {
			return m, false
		}
	}
	return m, true
}

// hashFiles records every regular file under dir (but manifest.json).
func hashFiles(dir string) (map[string]File, error) {
	files := map[string]File{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == ManifestFile {
			return err
		}
		sum, err := debian.FileSHA256(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = File{SHA256: sum, Size: fi.Size()}
		return nil
	})
	return files, err
}

// writeManifest writes m as dir's manifest.json.
func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644)
}
