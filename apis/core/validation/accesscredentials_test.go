package validation

import (
	"testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestAccessCredentialValidation(t *testing.T) {
	secret := func(name string) *v1.AccessCredentialSecretSource {
		return &v1.AccessCredentialSecretSource{SecretName: name}
	}
	ssh := func(name string, m v1.SSHPublicKeyAccessCredentialPropagationMethod) v1.AccessCredential {
		return v1.AccessCredential{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{
			Source: v1.SSHPublicKeyAccessCredentialSource{Secret: secret(name)}, PropagationMethod: m}}
	}
	agent := func(users ...string) v1.SSHPublicKeyAccessCredentialPropagationMethod {
		return v1.SSHPublicKeyAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: users}}
	}
	noCloud := v1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}
	password := v1.AccessCredential{UserPassword: &v1.UserPasswordAccessCredential{
		Source:            v1.UserPasswordAccessCredentialSource{Secret: secret("passwords")},
		PropagationMethod: v1.UserPasswordAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}}}}
	with := func(creds ...v1.AccessCredential) func(*v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.AccessCredentials = creds }
	}
	withNoCloudVolume := with // validVMISpec has a cloudInitNoCloud volume
	const p = "spec.accessCredentials"
	runSpecCases(t, []specCase{
		{name: "agent keys and a password", mutate: with(ssh("keys", agent("root", "fedora")), password)},
		{name: "noCloud keys", mutate: withNoCloudVolume(ssh("keys", noCloud))},
		{name: "configDrive without its volume", mutate: with(ssh("keys", v1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &v1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}})),
			want: []fe{{invalid, p + "[0].sshPublicKey.propagationMethod.configDrive"}}},
		{name: "no users", mutate: with(ssh("keys", agent())), want: []fe{{required, p + "[0].sshPublicKey.propagationMethod.qemuGuestAgent.users"}}},
		{name: "bad user", mutate: with(ssh("keys", agent("a/b"))), want: []fe{{invalid, p + "[0].sshPublicKey.propagationMethod.qemuGuestAgent.users[0]"}}},
		{name: "no method", mutate: with(ssh("keys", v1.SSHPublicKeyAccessCredentialPropagationMethod{})), want: []fe{{required, p + "[0].sshPublicKey.propagationMethod"}}},
		{name: "two methods", mutate: withNoCloudVolume(ssh("keys", v1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: noCloud.NoCloud,
			QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"root"}}})),
			want: []fe{{forbidden, p + "[0].sshPublicKey.propagationMethod"}}},
		{name: "no source", mutate: with(v1.AccessCredential{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{PropagationMethod: agent("root")}}),
			want: []fe{{required, p + "[0].sshPublicKey.source.secret"}}},
		{name: "bad secret name", mutate: with(ssh("Keys!", agent("root"))), want: []fe{{invalid, p + "[0].sshPublicKey.source.secret.secretName"}}},
		{name: "one secret twice", mutate: with(ssh("keys", agent("root")), ssh("keys", agent("fedora"))), want: []fe{{duplicate, p + "[1].sshPublicKey.source.secret.secretName"}}},
		{name: "empty credential", mutate: with(v1.AccessCredential{}), want: []fe{{required, p + "[0]"}}},
		{name: "both kinds", mutate: with(v1.AccessCredential{SSHPublicKey: ssh("keys", agent("root")).SSHPublicKey, UserPassword: password.UserPassword}),
			want: []fe{{forbidden, p + "[0]"}}},
	})
}
