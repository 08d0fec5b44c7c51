package disks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

func TestAuthorizedKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	kubeletSecretDir(t, dir, map[string]string{"b": "ssh-ed25519 BBB b@x\n", "a": "# mine\nssh-rsa AAA a@x\n\n  ssh-ed25519 CCC c@x  \n"})
	got, err := AuthorizedKeys(dir)
	want := []string{"ssh-rsa AAA a@x", "ssh-ed25519 CCC c@x", "ssh-ed25519 BBB b@x"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("keys %q, %v; want %q", got, err, want)
	}
	// A key that leads out of the Secret's directory is refused, not followed.
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := AuthorizedKeys(dir); err == nil {
		t.Errorf("a symlink out of the Secret was followed")
	}
}

func TestCloudInitPublicKeys(t *testing.T) {
	dir := t.TempDir()
	for i, key := range []string{"ssh-rsa NOCLOUD n@x", "ssh-rsa DRIVE d@x", "ssh-rsa AGENT a@x"} {
		d := filepath.Join(dir, protocol.AccessCredentialMountName(i))
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		kubeletSecretDir(t, d, map[string]string{"key": key})
	}
	cred := func(m v1.SSHPublicKeyAccessCredentialPropagationMethod) v1.AccessCredential {
		return v1.AccessCredential{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{PropagationMethod: m}}
	}
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns"}}
	vmi.Spec.AccessCredentials = []v1.AccessCredential{
		cred(v1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}),
		cred(v1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &v1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}}),
		cred(v1.SSHPublicKeyAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"root"}}}),
	}
	if got, err := cloudInitPublicKeys(vmi, false, dir); err != nil || !slices.Equal(got, []string{"ssh-rsa NOCLOUD n@x"}) {
		t.Errorf("noCloud keys %q, %v", got, err)
	}
	if got, err := cloudInitPublicKeys(vmi, true, dir); err != nil || !slices.Equal(got, []string{"ssh-rsa DRIVE d@x"}) {
		t.Errorf("configDrive keys %q, %v", got, err)
	}
	meta := string(NoCloud{InstanceID: "vm.ns", LocalHostname: "vm", PublicKeys: []string{"ssh-rsa NOCLOUD n@x"}}.metaData())
	if !strings.HasSuffix(meta, "public-keys:\n  \"0\": \"ssh-rsa NOCLOUD n@x\"\n") {
		t.Errorf("meta-data %q lacks the public keys", meta)
	}
}
