package images

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Debian packages the guest is made of. The kernel package is the one the metapackage
// depends on today (linux-image-<abi>-amd64), so a kernel security update rebuilds the guest.
const (
	kernelMetaPackage = "linux-image-amd64"
	busyboxPackage    = "busybox-static"
)

// aptListsGlob matches the package indexes apt-get update writes; their names, sizes and
// times tell whether a resolution made earlier still holds.
const aptListsGlob = "/var/lib/apt/lists/*_Packages*"

// Package is one resolved Debian package: what apt would download now.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Arch    string `json:"arch"`
	// SHA256 is the .deb's digest from the package index.
	SHA256 string `json:"sha256"`
	// Depends is the raw Depends field (used to find the kernel behind the metapackage).
	Depends string `json:"-"`
}

// debFile is the name apt-get download gives the package's file (an epoch's colon is
// written %3a).
func (p Package) debFile() string {
	return fmt.Sprintf("%s_%s_%s.deb", p.Name, strings.ReplaceAll(p.Version, ":", "%3a"), p.Arch)
}

// parseAptShow reads `apt-cache show` stanzas (RFC 822-style paragraphs separated by blank
// lines; continuation lines start with a space and are ignored here).
func parseAptShow(out []byte) []Package {
	var pkgs []Package
	var cur Package
	flush := func() {
		if cur.Name != "" {
			pkgs = append(pkgs, cur)
		}
		cur = Package{}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Package":
			cur.Name = val
		case "Version":
			cur.Version = val
		case "Architecture":
			cur.Arch = val
		case "SHA256":
			cur.SHA256 = val
		case "Depends":
			cur.Depends = val
		}
	}
	flush()
	return pkgs
}

// kernelDependency returns the linux-image-* package a metapackage's Depends names
// ("linux-image-6.1.0-57-amd64 (= 6.1.192-3)").
func kernelDependency(depends string) (string, error) {
	for _, alt := range strings.FieldsFunc(depends, func(r rune) bool { return r == ',' || r == '|' }) {
		name, _, _ := strings.Cut(strings.TrimSpace(alt), " ")
		if strings.HasPrefix(name, "linux-image-") {
			return name, nil
		}
	}
	return "", fmt.Errorf("no linux-image-* package in Depends %q", depends)
}

// aptShow returns the candidate version of each named package.
func aptShow(ctx context.Context, names ...string) (map[string]Package, error) {
	cmd := exec.CommandContext(ctx, "apt-cache", append([]string{"show", "--no-all-versions"}, names...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache show %s: %v: %s (is this Debian with apt's package lists? `apt-get update` fetches them)",
			strings.Join(names, " "), err, strings.TrimSpace(stderr.String()))
	}
	got := map[string]Package{}
	for _, p := range parseAptShow(out) {
		got[p.Name] = p
	}
	for _, n := range names {
		if _, ok := got[n]; !ok {
			return nil, fmt.Errorf("apt-cache knows no package %s; run `apt-get update`", n)
		}
	}
	return got, nil
}

// resolvePackages finds the kernel package behind the metapackage and the versions of it and
// busybox-static that apt would download now.
func resolvePackages(ctx context.Context) ([]Package, error) {
	first, err := aptShow(ctx, kernelMetaPackage, busyboxPackage)
	if err != nil {
		return nil, err
	}
	kname, err := kernelDependency(first[kernelMetaPackage].Depends)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kernelMetaPackage, err)
	}
	kernel, err := aptShow(ctx, kname)
	if err != nil {
		return nil, err
	}
	return []Package{kernel[kname], first[busyboxPackage]}, nil
}

// aptListsFingerprint digests the names, sizes and modification times of apt's package
// indexes: it changes whenever apt-get update brings new ones.
func aptListsFingerprint() (string, error) {
	files, err := filepath.Glob(aptListsGlob)
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d\n", f, fi.Size(), fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// aptUpdate refreshes apt's package lists (when a resolved version is no longer served).
func aptUpdate(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "apt-get", "update", "-qq").CombinedOutput()
	if err != nil {
		return fmt.Errorf("apt-get update: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// download fetches p into dir with apt-get download unless a file with the right digest is
// there already, and returns the file's path.
func download(ctx context.Context, dir string, p Package) (string, error) {
	path := filepath.Join(dir, p.debFile())
	if sum, err := fileSHA256(path); err == nil && sum == p.SHA256 {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "apt-get", "download", "-q", p.Name+"="+p.Version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get download %s=%s: %v: %s", p.Name, p.Version, err, strings.TrimSpace(string(out)))
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return "", fmt.Errorf("apt-get download %s=%s left no %s: %w", p.Name, p.Version, path, err)
	}
	if sum != p.SHA256 {
		return "", fmt.Errorf("%s: sha256 %s, the package index says %s", path, sum, p.SHA256)
	}
	return path, nil
}

// extract unpacks a .deb's files into dir (nothing is installed on the host).
func extract(ctx context.Context, deb, dir string) error {
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb -x %s: %v: %s", deb, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
