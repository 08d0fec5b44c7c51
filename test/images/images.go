// Package images builds the guest images Vireo's tests boot: a tiny Linux guest made from
// Debian packages (the kernel of linux-image-amd64, busybox-static, syslinux) that boots in
// seconds under TCG, prints Marker and offers a shell on ttyS0, gets its address by DHCP,
// serves HTTP on port 80, applies NoCloud user-data, draws text on the VGA console and
// powers off on the ACPI power button. It is published as a kernel and initramfs
// (and an OCI image of them for kernelBoot), a bootable raw and qcow2 disk, and a KubeVirt
// containerDisk OCI layout.
package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vireo-dev/vireo/imagebuild/debian"
)

// Tiny is the guest's name: its directory under the output directory and, with
// "-containerdisk", its image's name in vireo-local's registry.
const Tiny = "tiny"

// The files of a built guest, relative to its directory.
const (
	Kernel           = "vmlinuz"
	Initrd           = "initrd.img"
	DiskRaw          = "disk.raw"
	DiskQCOW2        = "disk.qcow2"
	ContainerDiskDir = "containerdisk"
	ManifestFile     = "manifest.json"
)

// Options configure a build.
type Options struct {
	// Out is the output directory (the repository's _output/images); the guest goes to
	// <Out>/tiny and the downloads and scratch space to <Out>/.work.
	Out string
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// Result is a built (or already up-to-date) guest.
type Result struct {
	// Dir is the guest's directory (<Out>/tiny).
	Dir      string
	Manifest Manifest
	// Cached is true when nothing had to be built.
	Cached bool
}

// Path is the absolute path of one of the guest's files (Kernel, DiskQCOW2, ...).
func (r Result) Path(name string) string { return filepath.Join(r.Dir, name) }

// Build makes the tiny guest under opts.Out unless a build from the same inputs is there.
// Outputs appear only complete: they are built in a scratch directory and swapped into place.
// Concurrent builds of one output directory wait for each other.
func Build(ctx context.Context, opts Options) (Result, error) {
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return Result{}, err
	}
	b := &builder{out: out, work: filepath.Join(out, ".work"), log: opts.Log}
	if err := os.MkdirAll(b.work, 0o755); err != nil {
		return Result{}, err
	}
	unlock, err := lockFile(filepath.Join(b.work, "lock"))
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	dir := filepath.Join(out, Tiny)
	pkgs, err := b.resolve(ctx, false)
	if err != nil {
		return Result{}, err
	}
	key := cacheKey(currentInputs(pkgs))
	if m, ok := upToDate(dir, key); ok {
		wrote, err := ensureKernelBoot(dir, b.work, m)
		if wrote {
			b.say("images: wrote the kernelBoot image of %s", dir)
		}
		return Result{Dir: dir, Manifest: m, Cached: !wrote}, err
	}
	if err := checkTools(); err != nil {
		return Result{}, err
	}
	m, err := b.build(ctx, dir, pkgs, key)
	var dl downloadError
	if errors.As(err, &dl) {
		// The lists may name versions the mirror no longer serves: refresh them once.
		b.say("%v; refreshing apt's package lists and trying again", err)
		if pkgs, err = b.resolve(ctx, true); err != nil {
			return Result{}, err
		}
		key = cacheKey(currentInputs(pkgs))
		m, err = b.build(ctx, dir, pkgs, key)
	}
	if err != nil {
		return Result{}, err
	}
	if _, err := ensureKernelBoot(dir, b.work, m); err != nil {
		return Result{}, err
	}
	return Result{Dir: dir, Manifest: m}, nil
}

type builder struct {
	out, work string
	log       io.Writer
}

func (b *builder) say(format string, args ...any) {
	if b.log != nil {
		fmt.Fprintf(b.log, format+"\n", args...)
	}
}

// resolvedCache remembers a resolution with the state of apt's lists it was made from and
// the packages asked for: asking apt takes seconds, and the answer cannot change while
// neither does.
type resolvedCache struct {
	Lists    string    `json:"lists"`
	Wanted   []string  `json:"wanted"`
	Packages []Package `json:"packages"`
}

// resolve returns the packages to build from: from the cache while apt's lists are
// unchanged, else from apt-cache (after apt-get update when update is set or apt knows
// none of them).
func (b *builder) resolve(ctx context.Context, update bool) ([]Package, error) {
	cacheFile := filepath.Join(b.work, "resolved.json")
	if update {
		if err := debian.Update(ctx); err != nil {
			return nil, err
		}
	}
	lists, err := debian.ListsFingerprint()
	if err != nil {
		return nil, err
	}
	var rc resolvedCache
	if data, err := os.ReadFile(cacheFile); err == nil && json.Unmarshal(data, &rc) == nil && rc.Lists == lists &&
		slices.Equal(rc.Wanted, wantedPackages) && len(rc.Packages) > 0 {
		return rc.Packages, nil
	}
	pkgs, err := resolvePackages(ctx)
	if err != nil && !update {
		b.say("%v; running apt-get update", err)
		if err := debian.Update(ctx); err != nil {
			return nil, err
		}
		if lists, err = debian.ListsFingerprint(); err != nil {
			return nil, err
		}
		pkgs, err = resolvePackages(ctx)
	}
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(resolvedCache{Lists: lists, Wanted: wantedPackages, Packages: pkgs})
	if err != nil {
		return nil, err
	}
	return pkgs, writeFileAtomic(cacheFile, data)
}

// downloadError marks a failed apt-get download, which a refresh of the lists may cure.
type downloadError struct{ err error }

func (e downloadError) Error() string { return e.err.Error() }
func (e downloadError) Unwrap() error { return e.err }

// build makes the guest in a scratch directory and swaps it into dir.
func (b *builder) build(ctx context.Context, dir string, pkgs []Package, key string) (Manifest, error) {
	start := time.Now()
	tmp, err := os.MkdirTemp(b.work, "build-")
	if err != nil {
		return Manifest{}, err
	}
	defer os.RemoveAll(tmp)
	roots := map[string]string{}
	for _, p := range pkgs {
		b.say("images: %s %s", p.Name, p.Version)
		deb, err := debian.Download(ctx, filepath.Join(b.work, "debs"), p)
		if err != nil {
			return Manifest{}, downloadError{err}
		}
		roots[p.Name] = filepath.Join(tmp, "root-"+p.Name)
		if err := debian.Extract(ctx, deb, roots[p.Name]); err != nil {
			return Manifest{}, err
		}
	}
	stage := filepath.Join(tmp, Tiny)
	if err := os.Mkdir(stage, 0o755); err != nil {
		return Manifest{}, err
	}
	kernelRoot := ""
	var agentRoots []string
	for _, p := range pkgs {
		switch {
		case strings.HasPrefix(p.Name, "linux-image-"):
			kernelRoot = roots[p.Name]
		case p.Name != busyboxPackage:
			agentRoots = append(agentRoots, roots[p.Name])
		}
	}
	agent, err := guestPrograms(agentRoots)
	if err != nil {
		return Manifest{}, err
	}
	mods, err := b.assemble(ctx, stage, kernelRoot, roots[busyboxPackage], agent)
	if err != nil {
		return Manifest{}, err
	}
	m := Manifest{Key: key, BuilderVersion: BuilderVersion, Packages: pkgs, KernelCmdline: KernelCmdline}
	for _, mod := range mods {
		m.Modules = append(m.Modules, mod.Name)
	}
	digest, err := writeContainerDisk(filepath.Join(stage, ContainerDiskDir), filepath.Join(stage, DiskQCOW2), tmp)
	if err != nil {
		return Manifest{}, err
	}
	m.ContainerDisk = ContainerDisk{Layout: ContainerDiskDir, Tag: "latest", Digest: digest.String(), DiskPath: "/" + ContainerDiskPath}
	if m.Files, err = hashFiles(stage); err != nil {
		return Manifest{}, err
	}
	if err := writeManifest(stage, m); err != nil {
		return Manifest{}, err
	}
	if err := publish(stage, dir); err != nil {
		return Manifest{}, err
	}
	b.pruneDebs(pkgs)
	b.say("images: built %s in %s", dir, time.Since(start).Round(100*time.Millisecond))
	return m, nil
}

// assemble writes the kernel, initramfs, raw and qcow2 disks into stage from the extracted
// kernel and busybox packages and the guest agent's files.
func (b *builder) assemble(ctx context.Context, stage, kernelRoot, busyboxRoot string, agent map[string][]byte) ([]module, error) {
	vmlinuz, err := filepath.Glob(filepath.Join(kernelRoot, "boot", "vmlinuz-*"))
	if err != nil || len(vmlinuz) != 1 {
		return nil, fmt.Errorf("expected one boot/vmlinuz-* in the kernel package, found %v", vmlinuz)
	}
	modDirs, err := filepath.Glob(filepath.Join(kernelRoot, "lib", "modules", "*"))
	if err != nil || len(modDirs) != 1 {
		return nil, fmt.Errorf("expected one lib/modules/<version> in the kernel package, found %v", modDirs)
	}
	if err := copyFile(vmlinuz[0], filepath.Join(stage, Kernel)); err != nil {
		return nil, err
	}
	mods, err := buildInitramfs(filepath.Join(stage, Initrd), busyboxRoot, modDirs[0], agent)
	if err != nil {
		return nil, err
	}
	// The extracted kernel package is some 400 MB: free it before the disks are made.
	if err := os.RemoveAll(kernelRoot); err != nil {
		return nil, err
	}
	if err := makeBootDisk(ctx, filepath.Join(stage, DiskRaw), filepath.Join(stage, Kernel), filepath.Join(stage, Initrd)); err != nil {
		return nil, err
	}
	return mods, convertQCOW2(ctx, filepath.Join(stage, DiskRaw), filepath.Join(stage, DiskQCOW2))
}

// publish puts the complete stage at dir: renamed there, or atomically exchanged with what
// was there (the old outputs then sit in stage, which the caller removes).
func publish(stage, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return os.Rename(stage, dir)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, stage, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		return fmt.Errorf("swapping %s into %s: %w", stage, dir, err)
	}
	return nil
}

// pruneDebs removes downloaded packages that are no longer current.
func (b *builder) pruneDebs(current []Package) {
	keep := map[string]bool{}
	for _, p := range current {
		keep[p.DebFile()] = true
	}
	debs, _ := filepath.Glob(filepath.Join(b.work, "debs", "*.deb"))
	for _, d := range debs {
		if !keep[filepath.Base(d)] {
			_ = os.Remove(d)
		}
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// lockFile takes an exclusive flock on path (released when the process dies, too).
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// modulePath is the repository's Go module, by which RepoOutput recognises its root.
const modulePath = "github.com/vireo-dev/vireo"

// RepoOutput is the repository's _output/images, the directory `make images` builds into,
// found by walking up from the working directory (tests run in their package's directory).
func RepoOutput() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module "+modulePath+"\n") {
			return filepath.Join(dir, "_output", "images"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s repository above the working directory", modulePath)
		}
		dir = parent
	}
}
