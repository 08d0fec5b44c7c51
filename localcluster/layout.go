package localcluster

import "path/filepath"

// Layout names the files of an installation under its root directory.
type Layout struct {
	// Root holds everything the installation writes (default _output/local).
	Root string
	// BinDir holds the binaries it runs (default _output/bin).
	BinDir string
	// Images holds the test guest images (`make images`), whose containerDisks the registry
	// serves; empty means "images" beside BinDir (_output/images).
	Images string
	// OCI holds the project's OCI images Vireo is deployed from (`make oci`); empty means
	// "oci" beside BinDir (_output/oci).
	OCI string
	// AlsoServedOCI are more directories of OCI images the registry serves by digest: an
	// upgrade's other release, so that its Pods' images stay pullable.
	AlsoServedOCI []string
}

// ImagesDir is the guest images' directory.
func (l Layout) ImagesDir() string {
	if l.Images != "" {
		return l.Images
	}
	return filepath.Join(filepath.Dir(filepath.Clean(l.BinDir)), "images")
}

// OCIDir holds the project's OCI images Vireo is deployed from (`make oci`), which the
// registry serves as vireo/<name>:latest: OCI, or "oci" beside BinDir (_output/oci).
func (l Layout) OCIDir() string {
	if l.OCI != "" {
		return l.OCI
	}
	return filepath.Join(filepath.Dir(filepath.Clean(l.BinDir)), "oci")
}

// Logs is the directory of component logs.
func (l Layout) Logs() string { return filepath.Join(l.Root, "logs") }

// Run is the directory of pid files.
func (l Layout) Run() string { return filepath.Join(l.Root, "run") }

// PKI is the directory of the CA and certificates.
func (l Layout) PKI() string { return filepath.Join(l.Root, "pki") }

// Data is the data directory of one component.
func (l Layout) Data(component string) string { return filepath.Join(l.Root, "data", component) }

// RegistryCredentials is the file with the user and password (JSON, mode 0600) of the OCI
// registry's private repositories, generated on the registry's first start.
func (l Layout) RegistryCredentials() string {
	return filepath.Join(l.Root, "registry-credentials.json")
}

// Kubeconfig is the admin kubeconfig users point kubectl at.
func (l Layout) Kubeconfig() string { return filepath.Join(l.Root, "kubeconfig") }

// Bin is the path of a binary.
func (l Layout) Bin(name string) string { return filepath.Join(l.BinDir, name) }
