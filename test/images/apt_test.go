package images

import (
	"testing"
)

const aptShowOutput = `Package: linux-image-amd64
Source: linux-signed-amd64 (6.1.192+3)
Version: 6.1.192-3
Architecture: amd64
Depends: linux-image-6.1.0-57-amd64 (= 6.1.192-3)
Description: Linux for 64-bit PCs (meta-package)
 This package depends on the latest Linux kernel and modules for use on PCs
 with AMD64, Intel 64 or VIA Nano processors.
SHA256: 4bf758c7753f48c545ecc23a3a56438f0b0acdf4d32c3ce8d4ec72361c1171bb

Package: busybox-static
Version: 1:1.35.0-4+deb12u1+b1
Architecture: amd64
SHA256: 3d3fdbe91d4660c873e14b092c213fe81c1da6362daa236eb25d0171eb108744
`

func TestParseAptShow(t *testing.T) {
	pkgs := parseAptShow([]byte(aptShowOutput))
	if len(pkgs) != 2 {
		t.Fatalf("got %d packages, want 2: %+v", len(pkgs), pkgs)
	}
	meta, bb := pkgs[0], pkgs[1]
	if meta.Name != "linux-image-amd64" || meta.Version != "6.1.192-3" || meta.Arch != "amd64" ||
		meta.SHA256 != "4bf758c7753f48c545ecc23a3a56438f0b0acdf4d32c3ce8d4ec72361c1171bb" {
		t.Errorf("metapackage: %+v", meta)
	}
	if bb.Name != "busybox-static" || bb.Version != "1:1.35.0-4+deb12u1+b1" {
		t.Errorf("busybox: %+v", bb)
	}
	if got, want := bb.debFile(), "busybox-static_1%3a1.35.0-4+deb12u1+b1_amd64.deb"; got != want {
		t.Errorf("debFile = %q, want %q (apt-get download's name)", got, want)
	}
	k, err := kernelDependency(meta.Depends)
	if err != nil || k != "linux-image-6.1.0-57-amd64" {
		t.Errorf("kernelDependency = %q, %v", k, err)
	}
}

func TestKernelDependency(t *testing.T) {
	cases := map[string]string{
		"linux-image-6.1.0-57-amd64 (= 6.1.192-3)":                           "linux-image-6.1.0-57-amd64",
		"firmware-linux-free, linux-image-6.12.9-amd64 (= 6.12.9-1) | foo":   "linux-image-6.12.9-amd64",
		"linux-image-6.1.0-57-amd64-unsigned (= 6.1.192-3), initramfs-tools": "linux-image-6.1.0-57-amd64-unsigned",
	}
	for in, want := range cases {
		if got, err := kernelDependency(in); err != nil || got != want {
			t.Errorf("kernelDependency(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := kernelDependency("initramfs-tools"); err == nil {
		t.Error("a Depends without a kernel was accepted")
	}
}
