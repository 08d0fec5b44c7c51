package v1

// AccessCredential is a credential put into the guest for remote access (KubeVirt's type):
// exactly one of sshPublicKey and userPassword.
type AccessCredential struct {
	// SSHPublicKey puts the public keys of a Secret into the guest.
	// +optional
	SSHPublicKey *SSHPublicKeyAccessCredential `json:"sshPublicKey,omitempty"`
	// UserPassword sets the passwords of guest users from a Secret.
	// +optional
	UserPassword *UserPasswordAccessCredential `json:"userPassword,omitempty"`
}

// SSHPublicKeyAccessCredential is where SSH public keys come from and how they reach the guest.
type SSHPublicKeyAccessCredential struct {
	// Source is the Secret whose values are the keys (one or more per value, a line each).
	Source SSHPublicKeyAccessCredentialSource `json:"source"`
	// PropagationMethod is how the keys reach the guest: exactly one method.
	PropagationMethod SSHPublicKeyAccessCredentialPropagationMethod `json:"propagationMethod"`
}

// SSHPublicKeyAccessCredentialSource is where the keys come from: exactly one source.
type SSHPublicKeyAccessCredentialSource struct {
	// Secret is a Secret in the VMI's namespace.
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty"`
}

// AccessCredentialSecretSource names a Secret in the VMI's namespace.
type AccessCredentialSecretSource struct {
	// SecretName is the Secret's name.
	SecretName string `json:"secretName"`
}

// SSHPublicKeyAccessCredentialPropagationMethod is how SSH keys reach the guest: exactly one of
// its fields.
type SSHPublicKeyAccessCredentialPropagationMethod struct {
	// ConfigDrive puts the keys into the cloudInitConfigDrive volume's metadata (public_keys),
	// which cloud-init installs for the guest's default user when the guest boots.
	// +optional
	ConfigDrive *ConfigDriveSSHPublicKeyAccessCredentialPropagation `json:"configDrive,omitempty"`
	// NoCloud puts the keys into the cloudInitNoCloud volume's metadata (public-keys), which
	// cloud-init installs for the guest's default user when the guest boots.
	// +optional
	NoCloud *NoCloudSSHPublicKeyAccessCredentialPropagation `json:"noCloud,omitempty"`
	// QemuGuestAgent writes the keys into the users' authorized_keys through the guest agent
	// while the guest runs, and again whenever the Secret changes.
	// +optional
	QemuGuestAgent *QemuGuestAgentSSHPublicKeyAccessCredentialPropagation `json:"qemuGuestAgent,omitempty"`
}

// ConfigDriveSSHPublicKeyAccessCredentialPropagation propagates keys by config drive.
type ConfigDriveSSHPublicKeyAccessCredentialPropagation struct{}

// NoCloudSSHPublicKeyAccessCredentialPropagation propagates keys by NoCloud.
type NoCloudSSHPublicKeyAccessCredentialPropagation struct{}

// QemuGuestAgentSSHPublicKeyAccessCredentialPropagation propagates keys through the guest agent.
type QemuGuestAgentSSHPublicKeyAccessCredentialPropagation struct {
	// Users are the guest users whose authorized_keys get the keys.
	// +listType=set
	Users []string `json:"users"`
}

// UserPasswordAccessCredential is where passwords come from and how they reach the guest.
type UserPasswordAccessCredential struct {
	// Source is the Secret whose keys are user names and whose values are their passwords.
	Source UserPasswordAccessCredentialSource `json:"source"`
	// PropagationMethod is how the passwords reach the guest.
	PropagationMethod UserPasswordAccessCredentialPropagationMethod `json:"propagationMethod"`
}

// UserPasswordAccessCredentialSource is where passwords come from: exactly one source.
type UserPasswordAccessCredentialSource struct {
	// Secret is a Secret in the VMI's namespace.
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty"`
}

// UserPasswordAccessCredentialPropagationMethod is how passwords reach the guest.
type UserPasswordAccessCredentialPropagationMethod struct {
	// QemuGuestAgent sets the passwords through the guest agent while the guest runs, and again
	// whenever the Secret changes.
	// +optional
	QemuGuestAgent *QemuGuestAgentUserPasswordAccessCredentialPropagation `json:"qemuGuestAgent,omitempty"`
}

// QemuGuestAgentUserPasswordAccessCredentialPropagation propagates passwords through the agent.
type QemuGuestAgentUserPasswordAccessCredentialPropagation struct{}
