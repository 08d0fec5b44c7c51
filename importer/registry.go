package importer

import (
	"archive/tar"
	"context"
	"errors"

	"io"
	"net"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// RegistrySource reads the disk of a containerDisk image (the one regular file under /disk/)
// from an OCI registry, as CDI's registry source does.
type RegistrySource struct {
	// Image is the image reference; CDI's docker:// prefix is accepted.
	Image string
	// Username and Password authenticate to the registry (none: anonymous).
	Username, Password string
	// CABundle is PEM certificates trusted for the registry in addition to the system's roots.
	CABundle []byte
	// Insecure lists registries (host[:port]) reached over plain HTTP.
	Insecure []string
}

func (s *RegistrySource) String() string { return "registry image " + s.reference() }

func (s *RegistrySource) reference() string { return strings.TrimPrefix(s.Image, "docker://") }

// Validate checks the reference before anything is read.
func (s *RegistrySource) Validate() error {
	_, err := s.parse()
	return err
}

func (s *RegistrySource) parse() (name.Reference, error) {
	ref, err := name.ParseReference(s.reference())
	if err != nil {
		return nil, permanentf("registry image %q: %v", s.Image, err)
	}
	for _, r := range s.Insecure {
		if ref.Context().RegistryStr() == r {
			return name.ParseReference(s.reference(), name.Insecure)
		}
	}
	return ref, nil
}

// Open pulls the image's manifest and streams its layers until the disk's file begins; the
// body is that file and size its length.
func (s *RegistrySource) Open(ctx context.Context) (io.ReadCloser, int64, error) {
	ref, err := s.parse()
	if err != nil {
		return nil, 0, err
	}
	opts, err := s.options(ctx)
	if err != nil {
		return nil, 0, err
	}
	img, err := remote.Image(ref, opts...)
	if err != nil {
		return nil, 0, registryError(s, err)
	}
	fs := mutate.Extract(img)
	tr := tar.NewReader(fs)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			fs.Close()
			return nil, 0, permanentf("%s has no disk under /disk/ (a containerDisk image keeps its disk there)", s)
		}
		if err != nil {
			fs.Close()
			return nil, 0, registryError(s, err)
		}
		file := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if hdr.Typeflag == tar.TypeReg && path.Dir(file) == "disk" {
			return &tarFile{Reader: tr, closer: fs}, hdr.Size, nil
		}
	}
}

// options authenticate and verify as the source says.
func (s *RegistrySource) options(ctx context.Context) ([]remote.Option, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = time.Minute
	cfg, err := tlsConfig(s.CABundle)
	if err != nil {
		return nil, err
	}
	tr.TLSClientConfig = cfg
	auth := authn.Anonymous
	if s.Username != "" || s.Password != "" {
		auth = authn.FromConfig(authn.AuthConfig{Username: s.Username, Password: s.Password})
	}
	return []remote.Option{remote.WithContext(ctx), remote.WithTransport(tr), remote.WithAuth(auth)}, nil
}

// registryError classifies a registry failure: an unknown image or refused credentials fail
// the same way every time; the network and the registry's server errors may not.
func registryError(s *RegistrySource, err error) error {
	var te *transport.Error
	if errors.As(err, &te) {
		if te.StatusCode >= 500 || te.StatusCode == http.StatusTooManyRequests || te.StatusCode == http.StatusRequestTimeout {
			return transientf("pulling %s: %v", s, err)
		}
		return permanentf("pulling %s: %v", s, err)
	}
	return transientf("pulling %s: %v", s, err)
}

// tarFile is one file of an image's flattened file system; closing it ends the pull.
type tarFile struct {
	io.Reader
	closer io.Closer
}

func (f *tarFile) Close() error { return f.closer.Close() }
