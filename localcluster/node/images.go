package node

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// ReasonRunContainerError: the container's command is not one its image provides on vireo-local.
const ReasonRunContainerError = "RunContainerError"

// ImageRef is an image reference split into its parts.
type ImageRef struct {
	// Repository is the canonical repository: with its registry, and docker.io/library/ added
	// where the reference leaves them out, as container runtimes read it.
	Repository string
	// Tag is the tag, empty when absent.
	Tag string
	// Digest is the digest (algorithm:hex), empty when absent.
	Digest string
}

var (
	tagRE       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digestRE    = regexp.MustCompile(`^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[A-Za-z0-9=_-]{32,}$`)
	componentRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	hostRE      = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]+)?$`)
)

// ParseImage splits an image reference ([registry[:port]/]name[:tag][@digest]) into its canonical
// repository, tag and digest.
func ParseImage(image string) (ImageRef, error) {
	var ref ImageRef
	rest := image
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest, ref.Digest = rest[:i], rest[i+1:]
		if !digestRE.MatchString(ref.Digest) {
			return ImageRef{}, fmt.Errorf("image %q: digest %q is not algorithm:hex (such as sha256:<64 hex digits>)", image, ref.Digest)
		}
	}
	if colon := strings.LastIndexByte(rest, ':'); colon > strings.LastIndexByte(rest, '/') {
		rest, ref.Tag = rest[:colon], rest[colon+1:]
		if !tagRE.MatchString(ref.Tag) {
			return ImageRef{}, fmt.Errorf("image %q: tag %q must be 1-128 letters, digits, '_', '.' or '-', not starting with '.' or '-'", image, ref.Tag)
		}
	}
	if rest == "" {
		return ImageRef{}, fmt.Errorf("image %q has no repository name; write it as [registry/]name[:tag][@digest]", image)
	}
	parts := strings.Split(rest, "/")
	domain := ""
	if len(parts) > 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost") {
		domain, parts = parts[0], parts[1:]
		if !hostRE.MatchString(domain) {
			return ImageRef{}, fmt.Errorf("image %q: registry %q is not a host name with an optional :port", image, domain)
		}
	}
	for _, p := range parts {
		if !componentRE.MatchString(p) {
			return ImageRef{}, fmt.Errorf("image %q: path component %q must be lower-case letters and digits separated by '.', '_', '__' or '-'", image, p)
		}
	}
	if domain == "" {
		domain = "docker.io"
		if len(parts) == 1 {
			parts = append([]string{"library"}, parts...)
		}
	}
	ref.Repository = domain + "/" + strings.Join(parts, "/")
	return ref, nil
}

// Binary is what an image means on vireo-local: a host executable standing for the image's
// entrypoint.
type Binary struct {
	// Repository is the canonical repository the image matched.
	Repository string
	// Path is the host executable.
	Path string
	// Args come before the container's own arguments (a built-in's subcommand, such as "pause").
	Args []string
	// Entrypoint is the executable's path inside the image; a container command naming it (or its
	// base name) runs Path instead.
	Entrypoint string
}

// Argv is the host command line for a container's command and args, as a container runtime
// builds it from the image: without a command, the image's entrypoint runs with args; with one,
// its first word must be the image's executable, since vireo-local has no image file system.
func (b Binary) Argv(command, args []string) ([]string, error) {
	argv := append([]string{b.Path}, b.Args...)
	if len(command) == 0 {
		return append(argv, args...), nil
	}
	if command[0] != b.Entrypoint && command[0] != path.Base(b.Entrypoint) {
		return nil, &ContainerError{Reason: ReasonRunContainerError, Message: fmt.Sprintf(
			"command %q is not in image %s on vireo-local: only its entrypoint %s can run there; drop the command or set it to %s",
			command[0], b.Repository, b.Entrypoint, b.Entrypoint)}
	}
	argv = append(argv, command[1:]...)
	return append(argv, args...), nil
}

// imageEntry is one row of the image table.
type imageEntry struct {
	repository string
	file       string   // executable in the bin directory
	args       []string // leading arguments (built-ins)
	entrypoint string
}

// imageTable is the one list of images vireo-local runs: Vireo's own, the etcd of
// artifacts/base, and as built-ins of vireo-local the pause image and the part of Kubernetes'
// e2e test image (agnhost) that Pod and Service tests use.
var imageTable = []imageEntry{
	{"ghcr.io/vireo-dev/vireo-apiserver", "vireo-apiserver", nil, "/usr/bin/vireo-apiserver"},
	{"ghcr.io/vireo-dev/vireo-controller", "vireo-controller", nil, "/usr/bin/vireo-controller"},
	{"ghcr.io/vireo-dev/vireo-nodeagent", "vireo-nodeagent", nil, "/usr/bin/vireo-nodeagent"},
	{"ghcr.io/vireo-dev/vireo-launcher", "vireo-launcher", nil, "/usr/bin/vireo-launcher"},
	{"ghcr.io/vireo-dev/vireo-importer", "vireo-importer", nil, "/usr/bin/vireo-importer"},
	{"quay.io/coreos/etcd", "etcd", nil, "/usr/local/bin/etcd"},
	{"registry.k8s.io/pause", "vireo-local", []string{"pause"}, "/pause"},
	{"registry.k8s.io/e2e-test-images/agnhost", "vireo-local", []string{"agnhost"}, "/agnhost"},
}

// Images resolves container images to the binaries of one bin directory.
type Images struct {
	// BinDir holds Vireo's binaries, etcd and vireo-local (default _output/bin).
	BinDir string
}

// Resolve returns the binary an image stands for; its tag and digest are ignored, since there is
// one build of each. An image vireo-local cannot run is a ContainerError with reason ErrImagePull,
// and a reference that cannot be parsed one with reason InvalidImageName, as a kubelet reports them.
func (im Images) Resolve(image string) (Binary, error) {
	ref, err := ParseImage(image)
	if err != nil {
		return Binary{}, &ContainerError{Reason: ReasonInvalidImageName, Message: err.Error()}
	}
	for _, e := range imageTable {
		if e.repository == ref.Repository {
			return Binary{
				Repository: e.repository,
				Path:       filepath.Join(im.BinDir, e.file),
				Args:       append([]string(nil), e.args...),
				Entrypoint: e.entrypoint,
			}, nil
		}
	}
	return Binary{}, &ContainerError{Reason: ReasonErrImagePull, Message: fmt.Sprintf(
		"image %q is not available on vireo-local nodes; they run only: %s (any tag or digest). Use one of them, or run this Pod on a real cluster",
		image, strings.Join(KnownImages(), ", "))}
}

// KnownImages lists the repositories vireo-local runs, in table order.
func KnownImages() []string {
	names := make([]string, len(imageTable))
	for i, e := range imageTable {
		names[i] = e.repository
	}
	return names
}
