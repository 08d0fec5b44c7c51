package protocol

import (
	"path"
	"strconv"
)

// SecretsDir is where a launcher Pod mounts the Secrets its VMI refers to, read-only, each at
// SecretMountDir(volume, use). Only vireo-controller decides what is mounted (as secret
// volumes); the launcher reads the files and holds no Kubernetes credentials.
const SecretsDir = "/var/run/kubevirt-private/secret"

// What a mounted Secret is used for: the last component of its mount directory.
const (
	// UserDataSecret is cloudInitNoCloud.secretRef: keys "userdata" or "userData".
	UserDataSecret = "userdata"
	// NetworkDataSecret is cloudInitNoCloud.networkDataSecretRef: keys "networkdata" or "networkData".
	NetworkDataSecret = "networkdata"
)

// MaxSecretFileBytes bounds what the launcher reads of a mounted Secret's file: a Secret holds
// at most 1 MiB in all.
const MaxSecretFileBytes = 1 << 20

// SecretMountDir is the directory the Secret of volume (a DNS-1123 label, checked by whoever
// builds the path) is mounted at for use.
func SecretMountDir(volume, use string) string {
	return path.Join(SecretsDir, volume, use)
}

// ConfigVolumesDir is where a launcher Pod mounts the data of its VMI's configMap, secret,
// serviceAccount and downwardAPI volumes, read-only, each at ConfigVolumeMountDir(volume); the
// launcher turns each into an ISO disk. The kubelet fills them (atomic writer layout: keys are
// links into a "..data" directory inside the mount).
const ConfigVolumesDir = "/var/run/kubevirt-private/config-volumes"

// ConfigVolumeMountDir is the directory the data of config volume (a DNS-1123 label, checked by
// whoever builds the path) is mounted at.
func ConfigVolumeMountDir(volume string) string {
	return path.Join(ConfigVolumesDir, volume)
}

// AccessCredentialsDir is where a launcher Pod mounts the Secrets of its VMI's access
// credentials, read-only, each at AccessCredentialMountDir(index). The kubelet updates the files
// when a Secret changes; the launcher applies qemuGuestAgent credentials again then.
const AccessCredentialsDir = "/var/run/kubevirt-private/access-credentials"

// AccessCredentialMountDir is the directory the Secret of spec.accessCredentials[index] is
// mounted at: named by the index, never by the Secret's name.
func AccessCredentialMountDir(index int) string {
	return path.Join(AccessCredentialsDir, AccessCredentialMountName(index))
}

// AccessCredentialMountName is the name of AccessCredentialMountDir(index) in its directory.
func AccessCredentialMountName(index int) string {
	return "credential-" + strconv.Itoa(index)
}
