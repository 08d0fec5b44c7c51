package validation

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
)

// fe is an expected field error: its type and full path.
type fe struct {
	typ  field.ErrorType
	path string
}

// Shorthands for the expected error types.
const (
	required     = field.ErrorTypeRequired
	invalid      = field.ErrorTypeInvalid
	notSupported = field.ErrorTypeNotSupported
	forbidden    = field.ErrorTypeForbidden
	tooMany      = field.ErrorTypeTooMany
)

// expectErrors fails the test unless got holds exactly the errors in want, in order.
func expectErrors(t *testing.T, got field.ErrorList, want ...fe) {
	t.Helper()
	var g, w []string
	for _, e := range got {
		g = append(g, fmt.Sprintf("%s %s", e.Type, e.Field))
	}
	for _, e := range want {
		w = append(w, fmt.Sprintf("%s %s", e.typ, e.path))
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("errors:\n got: %v\nwant: %v\nfull: %v", g, w, got)
	}
}

// ptr returns a pointer to v.

// size returns volume resources asking for s ("" = no size).
func size(s string) cdiv1beta1.VolumeResourceRequirements {
	if s == "" {
		return cdiv1beta1.VolumeResourceRequirements{}
	}
	return cdiv1beta1.VolumeResourceRequirements{Requests: cdiv1beta1.ResourceList{cdiv1beta1.ResourceStorage: resource.MustParse(s)}}
}

// validDV returns a DataVolume importing a qcow2 image over HTTPS into a 10Gi volume.
func validDV() *cdiv1beta1.DataVolume {
	return &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: "default"},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source:  &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "https://example.com/images/fedora.qcow2"}},
			Storage: &cdiv1beta1.StorageSpec{Resources: size("10Gi")},
		},
	}
}

// dvCase is a table case that changes validDV and expects errors.
type dvCase struct {
	name   string
	mutate func(s *cdiv1beta1.DataVolumeSpec)
	want   []fe
}

// runDVCases validates validDV changed by each case.
func runDVCases(t *testing.T, cases []dvCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dv := validDV()
			if tc.mutate != nil {
				tc.mutate(&dv.Spec)
			}
			expectErrors(t, ValidateDataVolume(dv), tc.want...)
		})
	}
}

// setSource returns a mutation that replaces the source.
func setSource(src *cdiv1beta1.DataVolumeSource) func(s *cdiv1beta1.DataVolumeSpec) {
	return func(s *cdiv1beta1.DataVolumeSpec) { s.Source = src }
}

func TestDataVolumeSources(t *testing.T) {
	registry := func(u string) *cdiv1beta1.DataVolumeSource {
		return &cdiv1beta1.DataVolumeSource{Registry: &cdiv1beta1.DataVolumeSourceRegistry{URL: &u}}
	}
	http := func(u string) *cdiv1beta1.DataVolumeSource {
		return &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: u}}
	}
	runDVCases(t, []dvCase{
		{name: "valid http"},
		{name: "plain http", mutate: setSource(http("http://10.0.0.1:8080/disk.img.xz"))},
		{name: "http without url", mutate: setSource(http("")), want: []fe{{required, "spec.source.http.url"}}},
		{name: "http with ftp url", mutate: setSource(http("ftp://example.com/disk.img")), want: []fe{{invalid, "spec.source.http.url"}}},
		{name: "http relative url", mutate: setSource(http("/images/disk.img")), want: []fe{{invalid, "spec.source.http.url"}}},
		{name: "http unparsable url", mutate: setSource(http("https://exa mple.com/%zz")), want: []fe{{invalid, "spec.source.http.url"}}},
		{name: "registry", mutate: setSource(registry("docker://quay.io/containerdisks/fedora:41"))},
		{name: "registry with port", mutate: setSource(registry("docker://registry.local:5000/fedora"))},
		{name: "registry without docker scheme", mutate: setSource(registry("quay.io/containerdisks/fedora:41")),
			want: []fe{{invalid, "spec.source.registry.url"}}},
		{name: "registry with https scheme", mutate: setSource(registry("https://quay.io/containerdisks/fedora")),
			want: []fe{{invalid, "spec.source.registry.url"}}},
		{name: "registry without url", mutate: setSource(&cdiv1beta1.DataVolumeSource{Registry: &cdiv1beta1.DataVolumeSourceRegistry{}}),
			want: []fe{{required, "spec.source.registry.url"}}},
		{name: "upload", mutate: setSource(&cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}})},
		{name: "blank", mutate: setSource(&cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}})},
		{name: "no source", mutate: setSource(nil), want: []fe{{required, "spec.source"}}},
		{name: "empty source", mutate: setSource(&cdiv1beta1.DataVolumeSource{}), want: []fe{{required, "spec.source"}}},
		{name: "two sources", mutate: setSource(&cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}, Blank: &cdiv1beta1.DataVolumeBlankImage{}}),
			want: []fe{{invalid, "spec.source"}}},
	})
}

func TestDataVolumeCloneSource(t *testing.T) {
	clone := func(ns, name, sz string) func(s *cdiv1beta1.DataVolumeSpec) {
		return func(s *cdiv1beta1.DataVolumeSpec) {
			s.Source = &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: ns, Name: name}}
			s.Storage = &cdiv1beta1.StorageSpec{Resources: size(sz)}
		}
	}
	pvcClone := func(sz string) func(s *cdiv1beta1.DataVolumeSpec) {
		return func(s *cdiv1beta1.DataVolumeSpec) {
			s.Source = &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: "golden", Name: "fedora-41"}}
			s.Storage, s.PVC = nil, &cdiv1beta1.PersistentVolumeClaimSpec{
				AccessModes: []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteOnce}, Resources: size(sz)}
		}
	}
	runDVCases(t, []dvCase{
		{name: "clone with size", mutate: clone("golden", "fedora-41", "20Gi")},
		{name: "clone infers size", mutate: clone("", "fedora-41", "")},
		{name: "clone into storage: {}", mutate: func(s *cdiv1beta1.DataVolumeSpec) {
			s.Source = &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: "golden", Name: "fedora-41"}}
			s.Storage = &cdiv1beta1.StorageSpec{}
		}},
		{name: "pvc clone with size", mutate: pvcClone("20Gi")},
		{name: "pvc clone without size", mutate: pvcClone(""), want: []fe{{required, "spec.pvc.resources.requests.storage"}}},
		{name: "clone without name", mutate: clone("golden", "", ""), want: []fe{{required, "spec.source.pvc.name"}}},
		{name: "clone bad name", mutate: clone("", "Fedora", ""), want: []fe{{invalid, "spec.source.pvc.name"}}},
		{name: "clone bad namespace", mutate: clone("Golden.Images", "f", ""), want: []fe{{invalid, "spec.source.pvc.namespace"}}},
		{name: "clone zero size", mutate: clone("", "f", "0"), want: []fe{{invalid, "spec.storage.resources.requests.storage"}}},
	})
}

func TestDataVolumeTarget(t *testing.T) {
	storage := func(sz string, modes []cdiv1beta1.PersistentVolumeAccessMode, vm *cdiv1beta1.PersistentVolumeMode) func(s *cdiv1beta1.DataVolumeSpec) {
		return func(s *cdiv1beta1.DataVolumeSpec) {
			s.Storage = &cdiv1beta1.StorageSpec{Resources: size(sz), AccessModes: modes, VolumeMode: vm}
		}
	}
	runDVCases(t, []dvCase{
		{name: "all access modes", mutate: storage("1Gi", []cdiv1beta1.PersistentVolumeAccessMode{
			cdiv1beta1.ReadWriteOnce, cdiv1beta1.ReadOnlyMany, cdiv1beta1.ReadWriteMany, cdiv1beta1.ReadWriteOncePod}, ptr.To(cdiv1beta1.PersistentVolumeBlock))},
		{name: "filesystem", mutate: storage("1Gi", nil, ptr.To(cdiv1beta1.PersistentVolumeFilesystem))},
		{name: "bad access mode", mutate: storage("1Gi", []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteOnce, "ReadWriteSome"}, nil),
			want: []fe{{notSupported, "spec.storage.accessModes[1]"}}},
		{name: "bad volume mode", mutate: storage("1Gi", nil, ptr.To(cdiv1beta1.PersistentVolumeMode("Raw"))),
			want: []fe{{notSupported, "spec.storage.volumeMode"}}},
		{name: "empty volume mode", mutate: storage("1Gi", nil, ptr.To(cdiv1beta1.PersistentVolumeMode(""))),
			want: []fe{{notSupported, "spec.storage.volumeMode"}}},
		{name: "no size", mutate: storage("", nil, nil), want: []fe{{required, "spec.storage.resources.requests.storage"}}},
		{name: "zero size", mutate: storage("0", nil, nil), want: []fe{{invalid, "spec.storage.resources.requests.storage"}}},
		{name: "exactly 1Mi", mutate: storage("1Mi", nil, nil)},
		{name: "below 1Mi", mutate: storage("1000Ki", nil, nil), want: []fe{{invalid, "spec.storage.resources.requests.storage"}}},
		{name: "1M is below 1Mi", mutate: storage("1M", nil, nil), want: []fe{{invalid, "spec.storage.resources.requests.storage"}}},
		{name: "storage with several access modes", mutate: storage("1Gi", []cdiv1beta1.PersistentVolumeAccessMode{
			cdiv1beta1.ReadWriteMany, cdiv1beta1.ReadWriteOnce}, nil)},
		{name: "pvc without access mode", mutate: func(s *cdiv1beta1.DataVolumeSpec) {
			s.Storage, s.PVC = nil, &cdiv1beta1.PersistentVolumeClaimSpec{Resources: size("5Gi")}
		}, want: []fe{{required, "spec.pvc.accessModes"}}},
		{name: "pvc with two access modes", mutate: func(s *cdiv1beta1.DataVolumeSpec) {
			s.Storage, s.PVC = nil, &cdiv1beta1.PersistentVolumeClaimSpec{Resources: size("5Gi"),
				AccessModes: []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteMany, cdiv1beta1.ReadWriteOnce}}
		}, want: []fe{{tooMany, "spec.pvc.accessModes"}}},
		{name: "pvc below 1Mi", mutate: func(s *cdiv1beta1.DataVolumeSpec) {
			s.Storage, s.PVC = nil, &cdiv1beta1.PersistentVolumeClaimSpec{Resources: size("512Ki"),
				AccessModes: []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteOnce}}
		}, want: []fe{{invalid, "spec.pvc.resources.requests.storage"}}},
		{name: "negative size", mutate: storage("-1Gi", nil, nil), want: []fe{{invalid, "spec.storage.resources.requests.storage"}}},
		{name: "pvc instead of storage", mutate: func(s *cdiv1beta1.DataVolumeSpec) {
			s.Storage = nil
			s.PVC = &cdiv1beta1.PersistentVolumeClaimSpec{Resources: size("5Gi"), AccessModes: []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteOnce}}
		}},
		{name: "pvc checked too", mutate: func(s *cdiv1beta1.DataVolumeSpec) {
			s.Storage = nil
			s.PVC = &cdiv1beta1.PersistentVolumeClaimSpec{AccessModes: []cdiv1beta1.PersistentVolumeAccessMode{"RWO"}, VolumeMode: ptr.To(cdiv1beta1.PersistentVolumeMode("raw"))}
		}, want: []fe{{notSupported, "spec.pvc.accessModes[0]"}, {required, "spec.pvc.resources.requests.storage"}, {notSupported, "spec.pvc.volumeMode"}}},
		{name: "neither storage nor pvc", mutate: func(s *cdiv1beta1.DataVolumeSpec) { s.Storage = nil },
			want: []fe{{required, "spec.storage"}}},
		{name: "both storage and pvc", mutate: func(s *cdiv1beta1.DataVolumeSpec) {
			s.PVC = &cdiv1beta1.PersistentVolumeClaimSpec{Resources: size("1Gi")}
		},
			want: []fe{{forbidden, "spec.pvc"}}},
	})
}

func TestDataVolumeContentType(t *testing.T) {
	set := func(f func(s *cdiv1beta1.DataVolumeSpec)) func(s *cdiv1beta1.DataVolumeSpec) { return f }
	runDVCases(t, []dvCase{
		{name: "kubevirt", mutate: set(func(s *cdiv1beta1.DataVolumeSpec) { s.ContentType = cdiv1beta1.DataVolumeKubeVirt })},
		{name: "archive over http", mutate: set(func(s *cdiv1beta1.DataVolumeSpec) { s.ContentType = cdiv1beta1.DataVolumeArchive })},
		{name: "archive by upload", mutate: set(func(s *cdiv1beta1.DataVolumeSpec) {
			s.ContentType, s.Source = cdiv1beta1.DataVolumeArchive, &cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}}
		})},
		{name: "unknown content type", mutate: set(func(s *cdiv1beta1.DataVolumeSpec) { s.ContentType = "iso" }),
			want: []fe{{notSupported, "spec.contentType"}}},
		{name: "archive from blank", mutate: set(func(s *cdiv1beta1.DataVolumeSpec) {
			s.ContentType, s.Source = cdiv1beta1.DataVolumeArchive, &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}}
		}), want: []fe{{invalid, "spec.contentType"}}},
		{name: "archive to block", mutate: set(func(s *cdiv1beta1.DataVolumeSpec) {
			s.ContentType, s.Storage.VolumeMode = cdiv1beta1.DataVolumeArchive, ptr.To(cdiv1beta1.PersistentVolumeBlock)
		}), want: []fe{{invalid, "spec.contentType"}}},
	})
}

func TestDataVolumeHTTPChecksum(t *testing.T) {
	const path = "spec.source.http.checksum"
	hex := func(n int) string { return strings.Repeat("0123456789abcdef", 8)[:n] }
	sum := func(c string) func(s *cdiv1beta1.DataVolumeSpec) {
		return func(s *cdiv1beta1.DataVolumeSpec) { s.Source.HTTP.Checksum = c }
	}
	runDVCases(t, []dvCase{
		{name: "md5", mutate: sum("md5:" + hex(32))},
		{name: "sha1", mutate: sum("sha1:" + hex(40))},
		{name: "sha256", mutate: sum("sha256:" + hex(64))},
		{name: "sha512", mutate: sum("sha512:" + hex(128))},
		{name: "uppercase hex", mutate: sum("sha256:" + strings.ToUpper(hex(64)))},
		{name: "sha256 too short", mutate: sum("sha256:" + hex(63)), want: []fe{{invalid, path}}},
		{name: "sha256 too long", mutate: sum("sha256:" + hex(64) + "0"), want: []fe{{invalid, path}}},
		{name: "md5 digest with sha256", mutate: sum("sha256:" + hex(32)), want: []fe{{invalid, path}}},
		{name: "not hex", mutate: sum("md5:" + strings.Repeat("g", 32)), want: []fe{{invalid, path}}},
		{name: "unknown algorithm", mutate: sum("sha384:" + hex(96)), want: []fe{{invalid, path}}},
		{name: "uppercase algorithm", mutate: sum("SHA256:" + hex(64)), want: []fe{{invalid, path}}},
		{name: "no algorithm", mutate: sum(hex(64)), want: []fe{{invalid, path}}},
		{name: "empty digest", mutate: sum("sha1:"), want: []fe{{invalid, path}}},
	})
}

func TestDataVolumeMetadata(t *testing.T) {
	dv := validDV()
	dv.Name = "Fedora"
	expectErrors(t, ValidateDataVolume(dv), fe{invalid, "metadata.name"})
}

func TestDataVolumeUpdate(t *testing.T) {
	old := validDV()
	old.ResourceVersion = "1"

	same := old.DeepCopy()
	same.Labels = map[string]string{"a": "b"}
	same.Status.Phase = cdiv1beta1.ImportInProgress
	expectErrors(t, ValidateDataVolumeUpdate(same, old))

	sameSize := old.DeepCopy()
	sameSize.Spec.Storage.Resources = size("10240Mi")
	expectErrors(t, ValidateDataVolumeUpdate(sameSize, old))

	grown := old.DeepCopy()
	grown.Spec.Storage.Resources = size("20Gi")
	expectErrors(t, ValidateDataVolumeUpdate(grown, old), fe{forbidden, "spec"})

	resourced := old.DeepCopy()
	resourced.Spec.Source.HTTP.URL = "https://example.com/other.qcow2"
	expectErrors(t, ValidateDataVolumeUpdate(resourced, old), fe{forbidden, "spec"})
}

func TestDataVolumeHTTPHeaders(t *testing.T) {
	headers := func(extra, secrets []string) func(s *cdiv1beta1.DataVolumeSpec) {
		return func(s *cdiv1beta1.DataVolumeSpec) {
			s.Source.HTTP.ExtraHeaders, s.Source.HTTP.SecretExtraHeaders = extra, secrets
		}
	}
	runDVCases(t, []dvCase{
		{name: "headers and secrets", mutate: headers([]string{"X-Token: abc", "Accept:*/*"}, []string{"creds"})},
		{name: "no colon", mutate: headers([]string{"X-Token abc"}, nil), want: []fe{{invalid, "spec.source.http.extraHeaders[0]"}}},
		{name: "bad name", mutate: headers([]string{"ok: 1", "Bad Name: 2"}, nil), want: []fe{{invalid, "spec.source.http.extraHeaders[1]"}}},
		{name: "line break", mutate: headers([]string{"X-A: 1\r\nX-B: 2"}, nil), want: []fe{{invalid, "spec.source.http.extraHeaders[0]"}}},
		{name: "secret name", mutate: headers(nil, []string{"Not_A_Name"}), want: []fe{{invalid, "spec.source.http.secretExtraHeaders[0]"}}},
	})
}
