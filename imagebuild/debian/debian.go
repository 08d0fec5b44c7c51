// Package debian resolves, downloads and unpacks Debian packages with the host's apt, without
// installing anything on the host: the test guest (test/images) and Vireo's OCI images
// (imagebuild) are made of packages unpacked into a directory of their own.
package debian

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
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

// DebFile is the name apt-get download gives the package's file (an epoch's colon is
// written %3a).
func (p Package) DebFile() string {
	return fmt.Sprintf("%s_%s_%s.deb", p.Name, strings.ReplaceAll(p.Version, ":", "%3a"), p.Arch)
}

// ParseShow reads `apt-cache show` stanzas (RFC 822-style paragraphs separated by blank
// lines; continuation lines start with a space and are ignored here).
func ParseShow(out []byte) []Package {
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

// Show returns the candidate version of each named package.
func Show(ctx context.Context, names ...string) (map[string]Package, error) {
	cmd := exec.CommandContext(ctx, "apt-cache", append([]string{"show", "--no-all-versions"}, names...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache show %s: %v: %s (is this Debian with apt's package lists? `apt-get update` fetches them)",
			strings.Join(names, " "), err, strings.TrimSpace(stderr.String()))
	}
	got := map[string]Package{}
	for _, p := range ParseShow(out) {
		got[p.Name] = p
	}
	for _, n := range names {
		if _, ok := got[n]; !ok {
			return nil, fmt.Errorf("apt-cache knows no package %s; run `apt-get update`", n)
		}
	}
	return got, nil
}

// Closure resolves names and everything they depend on (not what they recommend), as apt would
// install them on a system that has nothing installed: the packages an image made of them needs.
// The result is sorted by name.
func Closure(ctx context.Context, names ...string) ([]Package, error) {
	empty, err := os.CreateTemp("", "vireo-dpkg-status-")
	if err != nil {
		return nil, err
	}
	empty.Close()
	defer os.Remove(empty.Name())
	args := append([]string{"install", "-qq", "--print-uris", "--no-install-recommends",
		"-o", "Dir::State::status=" + empty.Name(), "-o", "Acquire::ForceHash=SHA256"}, names...)
	cmd := exec.CommandContext(ctx, "apt-get", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apt-get install --print-uris %s: %v: %s (`apt-get update` fetches the package lists)",
			strings.Join(names, " "), err, strings.TrimSpace(stderr.String()))
	}
	pkgs, err := ParsePrintURIs(out)
	if err != nil {
		return nil, err
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name < pkgs[j].Name })
	return pkgs, nil
}

// ParsePrintURIs reads `apt-get --print-uris` lines: 'URI' FILE SIZE SHA256:HEX, where FILE is
// NAME_VERSION_ARCH.deb with the version's epoch colon written %3a.
func ParsePrintURIs(out []byte) ([]Package, error) {
	var pkgs []Package
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 4 || !strings.HasPrefix(fields[3], "SHA256:") || !strings.HasSuffix(fields[1], ".deb") {
			return nil, fmt.Errorf("apt-get --print-uris: unexpected line %q (want 'URI' FILE SIZE SHA256:HEX)", line)
		}
		parts := strings.Split(strings.TrimSuffix(fields[1], ".deb"), "_")
		if len(parts) != 3 {
			return nil, fmt.Errorf("apt-get --print-uris: file %q is not NAME_VERSION_ARCH.deb", fields[1])
		}
		version, err := url.PathUnescape(parts[1])
		if err != nil {
			return nil, fmt.Errorf("apt-get --print-uris: version in %q: %w", fields[1], err)
		}
		pkgs = append(pkgs, Package{Name: parts[0], Version: version, Arch: parts[2],
			SHA256: strings.TrimPrefix(fields[3], "SHA256:")})
	}
	return pkgs, nil
}

// ListsFingerprint digests the names, sizes and modification times of apt's package
// indexes: it changes whenever apt-get update brings new ones.
func ListsFingerprint() (string, error) {
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

// Update refreshes apt's package lists (when a resolved version is no longer served).
func Update(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "apt-get", "update", "-qq").CombinedOutput()
	if err != nil {
		return fmt.Errorf("apt-get update: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Download fetches p into dir with apt-get download unless a file with the right digest is
// there already, and returns the file's path.
func Download(ctx context.Context, dir string, p Package) (string, error) {
	path := filepath.Join(dir, p.DebFile())
	if sum, err := FileSHA256(path); err == nil && sum == p.SHA256 {
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
	sum, err := FileSHA256(path)
	if err != nil {
		return "", fmt.Errorf("apt-get download %s=%s left no %s: %w", p.Name, p.Version, path, err)
	}
	if sum != p.SHA256 {
		return "", fmt.Errorf("%s: sha256 %s, the package index says %s", path, sum, p.SHA256)
	}
	return path, nil
}

// Extract unpacks a .deb's files into dir (nothing is installed on the host, and no
// maintainer script runs).
func Extract(ctx context.Context, deb, dir string) error {
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb -x %s: %v: %s", deb, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// FileSHA256 is the hex SHA-256 of a file's content.
func FileSHA256(path string) (string, error) {
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
