package v1

// AccessCredential is a credential put into the guest for remote access (KubeVirt's type):
// exactly one of sshPublicKey and userPassword.
type AccessCredential struct {
	// SSHPublicKey puts the public keys of a Secret into the guest.
	// +optional
	SSHPublicKey *SSHPublicKeyAccessCredential `json:"sshPublicKey,omitempty" protobuf:"bytes,1,opt,name=sshPublicKey"`
	// UserPassword sets the passwords of guest users from a Secret.
	// +optional
	UserPassword *UserPasswordAccessCredential `json:"userPassword,omitempty" protobuf:"bytes,2,opt,name=userPassword"`
}

// SSHPublicKeyAccessCredential is where SSH public keys come from and how they reach the guest.
type SSHPublicKeyAccessCredential struct {
	// Source is the Secret whose values are the keys (one or more per value, a line each).
	Source SSHPublicKeyAccessCredentialSource `json:"source" protobuf:"bytes,1,opt,name=source"`
	// PropagationMethod is how the keys reach the guest: exactly one method.
	PropagationMethod SSHPublicKeyAccessCredentialPropagationMethod `json:"propagationMethod" protobuf:"bytes,2,opt,name=propagationMethod"`
}

// SSHPublicKeyAccessCredentialSource is where the keys come from: exactly one source.
type SSHPublicKeyAccessCredentialSource struct {
	// Secret is a Secret in the VMI's namespace.
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty" protobuf:"bytes,1,opt,name=secret"`
}

// AccessCredentialSecretSource names a Secret in the VMI's namespace.
type AccessCredentialSecretSource struct {
	// SecretName is the Secret's name.
	SecretName string `json:"secretName" protobuf:"bytes,1,opt,name=secretName"`
}

// SSHPublicKeyAccessCredentialPropagationMethod is how SSH keys reach the guest: exactly one of
// its fields.
type SSHPublicKeyAccessCredentialPropagationMethod struct {
	// ConfigDrive puts the keys into the cloudInitConfigDrive volume's metadata (public_keys),
	// which cloud-init installs for the guest's default user when the guest boots.
	// +optional
	ConfigDrive *ConfigDriveSSHPublicKeyAccessCredentialPropagation `json:"configDrive,omitempty" protobuf:"bytes,1,opt,name=configDrive"`
	// NoCloud puts the keys into the cloudInitNoCloud volume's metadata (public-keys), which
	// cloud-init installs for the guest's default user when the guest boots.
	// +optional
	NoCloud *NoCloudSSHPublicKeyAccessCredentialPropagation `json:"noCloud,omitempty" protobuf:"bytes,2,opt,name=noCloud"`
	// QemuGuestAgent writes the keys into the users' authorized_keys through the guest agent
	// while the guest runs, and again whenever the Secret changes.
	// +optional
	QemuGuestAgent *QemuGuestAgentSSHPublicKeyAccessCredentialPropagation `json:"qemuGuestAgent,omitempty" protobuf:"bytes,3,opt,name=qemuGuestAgent"`
}

// ConfigDriveSSHPublicKeyAccessCredentialPropagation propagates keys by config drive.
type ConfigDriveSSHPublicKeyAccessCredentialPropagation struct{}

// NoCloudSSHPublicKeyAccessCredentialPropagation propagates keys by NoCloud.
type NoCloudSSHPublicKeyAccessCredentialPropagation struct{}

// QemuGuestAgentSSHPublicKeyAccessCredentialPropagation propagates keys through the guest agent.
type QemuGuestAgentSSHPublicKeyAccessCredentialPropagation struct {
	// Users are the guest users whose authorized_keys get the keys.
	// +listType=set
	Users []string `json:"users" protobuf:"bytes,1,rep,name=users"`
}

// UserPasswordAccessCredential is where passwords come from and how they reach the guest.
type UserPasswordAccessCredential struct {
	// Source is the Secret whose keys are user names and whose values are their passwords.
	Source UserPasswordAccessCredentialSource `json:"source" protobuf:"bytes,1,opt,name=source"`
	// PropagationMethod is how the passwords reach the guest.
	PropagationMethod UserPasswordAccessCredentialPropagationMethod `json:"propagationMethod" protobuf:"bytes,2,opt,name=propagationMethod"`
}

// UserPasswordAccessCredentialSource is where passwords come from: exactly one source.
type UserPasswordAccessCredentialSource struct {
	// Secret is a Secret in the VMI's namespace.
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty" protobuf:"bytes,1,opt,name=secret"`
}

// UserPasswordAccessCredentialPropagationMethod is how passwords reach the guest.
type UserPasswordAccessCredentialPropagationMethod struct {
	// QemuGuestAgent sets the passwords through the guest agent while the guest runs, and again
	// whenever the Secret changes.
	// +optional
	QemuGuestAgent *QemuGuestAgentUserPasswordAccessCredentialPropagation `json:"qemuGuestAgent,omitempty" protobuf:"bytes,1,opt,name=qemuGuestAgent"`
}

// QemuGuestAgentUserPasswordAccessCredentialPropagation propagates passwords through the agent.
type QemuGuestAgentUserPasswordAccessCredentialPropagation struct{}
