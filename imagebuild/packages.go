package imagebuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vireo-dev/vireo/imagebuild/debian"
)

// caPackage holds the CA certificates every image trusts (Mozilla's, as Debian ships them).
const caPackage = "ca-certificates"

var errNoCertificates = errors.New("the ca-certificates package holds no certificates under usr/share/ca-certificates")

// closure resolves names with everything they depend on, as apt would install them now; a
// list that no longer resolves (a version left the mirror) is retried after apt-get update.
func (b *builder) closure(ctx context.Context, names []string) ([]debian.Package, error) {
	key := strings.Join(names, " ")
	if pkgs, ok := b.resolved[key]; ok {
		return pkgs, nil
	}
	pkgs, err := debian.Closure(ctx, names...)
	if err != nil {
		if uerr := debian.Update(ctx); uerr != nil {
			return nil, fmt.Errorf("%w (and %v)", err, uerr)
		}
		if pkgs, err = debian.Closure(ctx, names...); err != nil {
			return nil, err
		}
	}
	if b.resolved == nil {
		b.resolved = map[string][]debian.Package{}
	}
	b.resolved[key] = pkgs
	return pkgs, nil
}

// download fetches pkgs into the cache (each once, checked against the package index's digest)
// and unpacks them into root.
func (b *builder) unpack(ctx context.Context, pkgs []debian.Package, root string) error {
	for _, p := range pkgs {
		deb, err := debian.Download(ctx, filepath.Join(b.cache, "debs"), p)
		if err != nil {
			return err
		}
		if err := debian.Extract(ctx, deb, root); err != nil {
			return err
		}
	}
	return nil
}

// packagesLayer is the layer of pkgs unpacked (no maintainer script runs), with the dynamic
// linker's cache made for them (ldconfig -r: without it nothing under /usr/lib/x86_64-linux-gnu
// is found, since Debian's loader knows that directory only from /etc/ld.so.conf.d).
func (b *builder) packagesLayer(ctx context.Context, pkgs []debian.Package) (cachedLayer, error) {
	key := "debs-" + digestOf(struct {
		V    int
		Pkgs []debian.Package
	}{builderVersion, pkgs})
	return b.cachedLayerAt(key, func(path string) (int64, error) {
		fmt.Fprintf(b.opts.Log, "  unpacking %d Debian packages\n", len(pkgs))
		root, err := os.MkdirTemp(b.cache, "rootfs-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(root)
		if err := b.unpack(ctx, pkgs, root); err != nil {
			return 0, err
		}
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(root, "etc", "ld.so.conf"), []byte("include /etc/ld.so.conf.d/*.conf\n"), 0o644); err != nil {
			return 0, err
		}
		if out, err := exec.CommandContext(ctx, "ldconfig", "-X", "-r", root).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("ldconfig -r %s: %v: %s", root, err, strings.TrimSpace(string(out)))
		}
		// ldconfig's auxiliary cache is host state, not the image's.
		os.RemoveAll(filepath.Join(root, "var", "cache", "ldconfig"))
		if err := linkBusyboxApplets(ctx, root); err != nil {
			return 0, err
		}
		return writeLayer(path, layerEpoch, nil, root)
	})
}

// baseLayer holds what every image has besides its binary: /etc/passwd and /etc/group, the CA
// bundle, a world-writable /tmp and the list of the image's Debian packages.
func (b *builder) baseLayer(ctx context.Context, pkgs []debian.Package) (cachedLayer, error) {
	ca, err := b.closure(ctx, []string{caPackage})
	if err != nil {
		return cachedLayer{}, err
	}
	var caDeb debian.Package
	for _, p := range ca {
		if p.Name == caPackage {
			caDeb = p
		}
	}
	var list strings.Builder
	for _, p := range pkgs {
		fmt.Fprintf(&list, "%s=%s\n", p.Name, p.Version)
	}
	key := "base-" + digestOf(struct {
		V                   int
		Passwd, Group, Pkgs string
		CA                  debian.Package
	}{builderVersion, passwd, group, list.String(), caDeb})
	return b.cachedLayerAt(key, func(path string) (int64, error) {
		bundle, err := b.caBundle(ctx, caDeb)
		if err != nil {
			return 0, err
		}
		dir := fs.ModeDir | 0o755
		files := []layerFile{
			{Name: "etc", Mode: dir}, {Name: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
			{Name: "etc/group", Mode: 0o644, Data: []byte(group)},
			{Name: "etc/ssl", Mode: dir}, {Name: "etc/ssl/certs", Mode: dir},
			{Name: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: bundle},
			{Name: "tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
			{Name: "home", Mode: dir}, {Name: "home/nonroot", Mode: dir, UID: 65532, GID: 65532},
			{Name: "usr", Mode: dir}, {Name: "usr/share", Mode: dir}, {Name: "usr/share/vireo", Mode: dir},
			{Name: strings.TrimPrefix(PackagesFile, "/"), Mode: 0o644, Data: []byte(list.String())},
		}
		return writeLayer(path, layerEpoch, files, "")
	})
}

// caBundle concatenates the certificates of the ca-certificates package in name order, as its
// update-ca-certificates does with every certificate enabled (Debian's default).
func (b *builder) caBundle(ctx context.Context, p debian.Package) ([]byte, error) {
	root, err := os.MkdirTemp(b.cache, "ca-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	if err := b.unpack(ctx, []debian.Package{p}, root); err != nil {
		return nil, err
	}
	var certs []string
	err = filepath.WalkDir(filepath.Join(root, "usr", "share", "ca-certificates"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(path, ".crt") {
			certs = append(certs, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, errNoCertificates
	}
	sort.Strings(certs)
	var bundle bytes.Buffer
	for _, c := range certs {
		pem, err := os.ReadFile(c)
		if err != nil {
			return nil, err
		}
		bundle.Write(bytes.TrimRight(pem, "\n"))
		bundle.WriteByte('\n')
	}
	return bundle.Bytes(), nil
}

// linkBusyboxApplets gives an image with Debian's static busybox its applets (sh, id, cat...)
// as symlinks where no package put a file, as `busybox --install -s` would: Debian makes them
// in no package, and no maintainer script runs here.
func linkBusyboxApplets(ctx context.Context, root string) error {
	busybox := filepath.Join(root, "bin", "busybox")
	if _, err := os.Stat(busybox); err != nil {
		return nil
	}
	out, err := exec.CommandContext(ctx, busybox, "--list-full").Output()
	if err != nil {
		return fmt.Errorf("%s --list-full: %w", busybox, err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if strings.Contains(applet, "..") {
			continue
		}
		link := filepath.Join(root, applet)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return err
		}
		if err := os.Symlink("/bin/busybox", link); err != nil {
			return err
		}
	}
	return nil
}
