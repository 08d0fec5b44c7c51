package launcher

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

func TestCredentialOps(t *testing.T) {
	dir := t.TempDir()
	secrets := []map[string]string{
		{"a": "ssh-rsa A a@x\n", "b": "ssh-rsa B b@x"},
		{"root": "s3cret", "fedora": "hunter2"},
		{"k": "ssh-rsa A a@x\nssh-rsa C c@x"},
		{"k": "ssh-rsa BOOT boot@x"},
	}
	for i, files := range secrets {
		d := filepath.Join(dir, protocol.AccessCredentialMountName(i))
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for k, v := range files {
			if err := os.WriteFile(filepath.Join(d, k), []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	agent := func(users ...string) *v1.SSHPublicKeyAccessCredential {
		return &v1.SSHPublicKeyAccessCredential{PropagationMethod: v1.SSHPublicKeyAccessCredentialPropagationMethod{
			QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: users}}}
	}
	creds := []v1.AccessCredential{
		{SSHPublicKey: agent("root", "fedora")},
		{UserPassword: &v1.UserPasswordAccessCredential{PropagationMethod: v1.UserPasswordAccessCredentialPropagationMethod{
			QemuGuestAgent: &v1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}}}},
		{SSHPublicKey: agent("root")},
		// Propagated by cloud-init at boot, not by the agent.
		{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{PropagationMethod: v1.SSHPublicKeyAccessCredentialPropagationMethod{
			NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}}},
	}
	got, err := credentialOps(creds, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []credentialOp{
		{User: "fedora", Password: "hunter2", IsPassword: true},
		{User: "root", Password: "s3cret", IsPassword: true},
		{User: "root", Keys: []string{"ssh-rsa A a@x", "ssh-rsa B b@x", "ssh-rsa C c@x"}},
		{User: "fedora", Keys: []string{"ssh-rsa A a@x", "ssh-rsa B b@x"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("operations\n got %+v\nwant %+v", got, want)
	}
	if _, err := credentialOps([]v1.AccessCredential{{}, {SSHPublicKey: agent("root")}}, filepath.Join(dir, "absent")); err == nil {
		t.Errorf("a Secret that is not mounted gave no error")
	}
}
