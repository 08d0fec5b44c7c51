package node

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseImage(t *testing.T) {
	cases := []struct {
		in      string
		want    ImageRef
		wantErr string
	}{
		{in: "busybox", want: ImageRef{Repository: "docker.io/library/busybox"}},
		{in: "busybox:1.36", want: ImageRef{Repository: "docker.io/library/busybox", Tag: "1.36"}},
		{in: "team/app:v1", want: ImageRef{Repository: "docker.io/team/app", Tag: "v1"}},
		{in: "ghcr.io/vireo-dev/vireo-apiserver:latest", want: ImageRef{Repository: "ghcr.io/vireo-dev/vireo-apiserver", Tag: "latest"}},
		{in: "localhost:5000/vireo-dev/vireo-importer", want: ImageRef{Repository: "localhost:5000/vireo-dev/vireo-importer"}},
		{in: "localhost/app", want: ImageRef{Repository: "localhost/app"}},
		{in: "registry.local:5000/a/b:1.2@" + testDigest, want: ImageRef{Repository: "registry.local:5000/a/b", Tag: "1.2", Digest: testDigest}},
		{in: "registry.k8s.io/pause@" + testDigest, want: ImageRef{Repository: "registry.k8s.io/pause", Digest: testDigest}},
		{in: "a__b/c-d.e:tag_1", want: ImageRef{Repository: "docker.io/a__b/c-d.e", Tag: "tag_1"}},
		{in: "", wantErr: "no repository"},
		{in: ":latest", wantErr: "no repository"},
		{in: "busybox:", wantErr: "tag"},
		{in: "busybox:-x", wantErr: "tag"},
		{in: "busybox@sha256:short", wantErr: "digest"},
		{in: "busybox@", wantErr: "digest"},
		{in: "Busybox", wantErr: "path component"},
		{in: "ghcr.io//x", wantErr: "path component"},
		{in: "ghcr.io/x/", wantErr: "path component"},
		{in: "bad_host.io:x/a", wantErr: "registry"},
		{in: "bad_host.io:5000/a", wantErr: "registry"},
	}
	for _, c := range cases {
		got, err := ParseImage(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseImage(%q) = %+v, %v; want error containing %q", c.in, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseImage(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	im := Images{BinDir: "/opt/bin"}
	cases := []struct {
		image    string
		wantPath string
		wantArgs []string
		reason   string
	}{
		{image: "ghcr.io/vireo-dev/vireo-apiserver:latest", wantPath: "/opt/bin/vireo-apiserver"},
		{image: "ghcr.io/vireo-dev/vireo-controller:v0.1.0", wantPath: "/opt/bin/vireo-controller"},
		{image: "ghcr.io/vireo-dev/vireo-nodeagent@" + testDigest, wantPath: "/opt/bin/vireo-nodeagent"},
		{image: "ghcr.io/vireo-dev/vireo-launcher:dev@" + testDigest, wantPath: "/opt/bin/vireo-launcher"},
		{image: "ghcr.io/vireo-dev/vireo-importer", wantPath: "/opt/bin/vireo-importer"},
		{image: "quay.io/coreos/etcd:v3.6.5", wantPath: "/opt/bin/etcd"},
		{image: "registry.k8s.io/pause:3.10", wantPath: "/opt/bin/vireo-local", wantArgs: []string{"pause"}},
		{image: "ghcr.io/vireo-dev/vireo-other:latest", reason: ReasonErrImagePull},
		{image: "docker.io/library/busybox", reason: ReasonErrImagePull},
		{image: "pause", reason: ReasonErrImagePull},
		{image: "ghcr.io/vireo-dev/vireo-apiserver:", reason: ReasonInvalidImageName},
		{image: "GHCR.io/Vireo-Dev/vireo-apiserver", reason: ReasonInvalidImageName},
	}
	for _, c := range cases {
		b, err := im.Resolve(c.image)
		if c.reason != "" {
			var ce *ContainerError
			if !errors.As(err, &ce) || ce.Reason != c.reason {
				t.Errorf("Resolve(%q) = %+v, %v; want a ContainerError with reason %s", c.image, b, err, c.reason)
			}
			continue
		}
		if err != nil || b.Path != c.wantPath || !reflect.DeepEqual(b.Args, c.wantArgs) {
			t.Errorf("Resolve(%q) = %+v, %v; want path %s args %v", c.image, b, err, c.wantPath, c.wantArgs)
		}
	}
}

func TestResolveUnknownMessage(t *testing.T) {
	_, err := Images{BinDir: "/b"}.Resolve("nginx:1.27")
	msg := err.Error()
	for _, want := range []string{"ErrImagePull", `"nginx:1.27"`, "not available on vireo-local", "ghcr.io/vireo-dev/vireo-apiserver", "registry.k8s.io/pause"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// TestResolveBaseManifests keeps the table and artifacts/base in step: every image the
// installation manifests name must run on vireo-local.
func TestResolveBaseManifests(t *testing.T) {
	files, err := filepath.Glob("../../artifacts/base/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests found under artifacts/base: %v", err)
	}
	imageLine := regexp.MustCompile(`(?m)^\s*(?:-\s*)?image:\s*["']?([^"'\s#]+)`)
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range imageLine.FindAllStringSubmatch(string(data), -1) {
			seen++
			if _, err := (Images{BinDir: "/b"}).Resolve(m[1]); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	if seen < 4 {
		t.Errorf("found only %d images in artifacts/base; the pattern no longer matches the manifests", seen)
	}
}

func TestArgv(t *testing.T) {
	etcd := Binary{Repository: "quay.io/coreos/etcd", Path: "/b/etcd", Entrypoint: "/usr/local/bin/etcd"}
	pause := Binary{Repository: "registry.k8s.io/pause", Path: "/b/vireo-local", Args: []string{"pause"}, Entrypoint: "/pause"}
	cases := []struct {
		b             Binary
		command, args []string
		want          []string
		wantErr       bool
	}{
		{b: etcd, want: []string{"/b/etcd"}},
		{b: etcd, args: []string{"--name=a"}, want: []string{"/b/etcd", "--name=a"}},
		{b: etcd, command: []string{"/usr/local/bin/etcd"}, args: []string{"--name=a"}, want: []string{"/b/etcd", "--name=a"}},
		{b: etcd, command: []string{"etcd", "--x"}, args: []string{"--y"}, want: []string{"/b/etcd", "--x", "--y"}},
		{b: pause, want: []string{"/b/vireo-local", "pause"}},
		{b: pause, command: []string{"/pause"}, want: []string{"/b/vireo-local", "pause"}},
		{b: etcd, command: []string{"/bin/sh", "-c", "etcd"}, wantErr: true},
	}
	for _, c := range cases {
		got, err := c.b.Argv(c.command, c.args)
		if c.wantErr {
			var ce *ContainerError
			if !errors.As(err, &ce) || ce.Reason != ReasonRunContainerError || !strings.Contains(ce.Message, "/usr/local/bin/etcd") {
				t.Errorf("Argv(%v, %v) = %v, %v; want RunContainerError naming the entrypoint", c.command, c.args, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Argv(%v, %v) = %v, %v; want %v", c.command, c.args, got, err, c.want)
		}
	}
}
