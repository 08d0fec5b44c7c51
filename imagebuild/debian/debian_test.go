package debian

import (
	"strings"
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

func TestParseShow(t *testing.T) {
	pkgs := ParseShow([]byte(aptShowOutput))
	if len(pkgs) != 2 {
		t.Fatalf("got %d packages, want 2: %+v", len(pkgs), pkgs)
	}
	meta, bb := pkgs[0], pkgs[1]
	if meta.Name != "linux-image-amd64" || meta.Version != "6.1.192-3" || meta.Arch != "amd64" ||
		meta.SHA256 != "4bf758c7753f48c545ecc23a3a56438f0b0acdf4d32c3ce8d4ec72361c1171bb" ||
		meta.Depends != "linux-image-6.1.0-57-amd64 (= 6.1.192-3)" {
		t.Errorf("metapackage: %+v", meta)
	}
	if bb.Name != "busybox-static" || bb.Version != "1:1.35.0-4+deb12u1+b1" {
		t.Errorf("busybox: %+v", bb)
	}
	if got, want := bb.DebFile(), "busybox-static_1%3a1.35.0-4+deb12u1+b1_amd64.deb"; got != want {
		t.Errorf("DebFile = %q, want %q (apt-get download's name)", got, want)
	}
}

func TestParsePrintURIs(t *testing.T) {
	out := `'http://deb.example/pool/main/a/audit/libaudit-common_3.0.9-1_all.deb' libaudit-common_1%3a3.0.9-1_all.deb 10448 SHA256:17d0341ca6ce604ce59c296780ac2c2a24141a769823c50669af942c025e6591
'http://deb.example/pool/main/g/gcc-12/gcc-12-base_12.2.0-14%2bdeb12u1_amd64.deb' gcc-12-base_12.2.0-14+deb12u1_amd64.deb 37596 SHA256:1896a2aacf4ad681ff5eacc24a5b0ca4d5d9c9b9c9e4b6de5197bc1e116ea619
`
	pkgs, err := ParsePrintURIs([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{
		{Name: "libaudit-common", Version: "1:3.0.9-1", Arch: "all", SHA256: "17d0341ca6ce604ce59c296780ac2c2a24141a769823c50669af942c025e6591"},
		{Name: "gcc-12-base", Version: "12.2.0-14+deb12u1", Arch: "amd64", SHA256: "1896a2aacf4ad681ff5eacc24a5b0ca4d5d9c9b9c9e4b6de5197bc1e116ea619"},
	}
	if len(pkgs) != len(want) {
		t.Fatalf("got %+v, want %+v", pkgs, want)
	}
	for i := range want {
		if pkgs[i] != want[i] {
			t.Errorf("package %d = %+v, want %+v", i, pkgs[i], want[i])
		}
		if got := pkgs[i].DebFile(); got != out[strings.Index(out, got):][:len(got)] {
			t.Errorf("DebFile %q does not round-trip", got)
		}
	}
	for _, bad := range []string{"'u' x.deb 1 MD5Sum:00", "'u' nounderscore.deb 1 SHA256:00", "'u' a_b_c_d.deb 1 SHA256:00"} {
		if _, err := ParsePrintURIs([]byte(bad)); err == nil {
			t.Errorf("ParsePrintURIs(%q) accepted it", bad)
		}
	}
}
