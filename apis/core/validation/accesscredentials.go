package validation

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// validateAccessCredentials checks the VMI's access credentials: one kind, one source and one
// propagation method each; a cloud-init propagation needs its cloud-init volume; a Secret serves
// one credential only.
func validateAccessCredentials(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	secrets := map[string]bool{}
	for i, ac := range spec.AccessCredentials {
		path := fldPath.Child("accessCredentials").Index(i)
		var secret *v1.AccessCredentialSecretSource
		var srcPath *field.Path
		switch {
		case ac.SSHPublicKey != nil && ac.UserPassword != nil:
			errs = append(errs, field.Forbidden(path, "only one of sshPublicKey and userPassword may be set"))
			continue
		case ac.SSHPublicKey != nil:
			secret, srcPath = ac.SSHPublicKey.Source.Secret, path.Child("sshPublicKey", "source")
			errs = append(errs, validateSSHPropagation(spec, &ac.SSHPublicKey.PropagationMethod, path.Child("sshPublicKey", "propagationMethod"))...)
		case ac.UserPassword != nil:
			secret, srcPath = ac.UserPassword.Source.Secret, path.Child("userPassword", "source")
			if ac.UserPassword.PropagationMethod.QemuGuestAgent == nil {
				errs = append(errs, field.Required(path.Child("userPassword", "propagationMethod", "qemuGuestAgent"), "passwords are set through the guest agent"))
			}
		default:
			errs = append(errs, field.Required(path, "one of sshPublicKey and userPassword"))
			continue
		}
		if secret == nil {
			errs = append(errs, field.Required(srcPath.Child("secret"), "the Secret the credential comes from"))
			continue
		}
		namePath := srcPath.Child("secret", "secretName")
		if secret.SecretName == "" {
			errs = append(errs, field.Required(namePath, ""))
			continue
		}
		errs = append(errs, validateDNS1123Subdomain(secret.SecretName, namePath)...)
		if secrets[secret.SecretName] {
			errs = append(errs, field.Duplicate(namePath, secret.SecretName))
		}
		secrets[secret.SecretName] = true
	}
	return errs
}

// validateSSHPropagation checks an SSH key's propagation method.
func validateSSHPropagation(spec *v1.VirtualMachineInstanceSpec, m *v1.SSHPublicKeyAccessCredentialPropagationMethod, path *field.Path) field.ErrorList {
	var set []string
	var errs field.ErrorList
	if m.NoCloud != nil {
		set = append(set, "noCloud")
		if !slices.ContainsFunc(spec.Volumes, func(v v1.Volume) bool { return v.CloudInitNoCloud != nil }) {
			errs = append(errs, field.Invalid(path.Child("noCloud"), "{}", "needs a cloudInitNoCloud volume, whose metadata carries the keys"))
		}
	}
	if m.ConfigDrive != nil {
		set = append(set, "configDrive")
		if !slices.ContainsFunc(spec.Volumes, func(v v1.Volume) bool { return v.CloudInitConfigDrive != nil }) {
			errs = append(errs, field.Invalid(path.Child("configDrive"), "{}", "needs a cloudInitConfigDrive volume, whose metadata carries the keys"))
		}
	}
	if q := m.QemuGuestAgent; q != nil {
		set = append(set, "qemuGuestAgent")
		if len(q.Users) == 0 {
			errs = append(errs, field.Required(path.Child("qemuGuestAgent", "users"), "the guest users whose authorized_keys get the keys"))
		}
		for j, u := range q.Users {
			if u == "" || len(u) > 32 || slices.ContainsFunc([]rune(u), func(r rune) bool { return r == '/' || r == ':' || r < ' ' }) {
				errs = append(errs, field.Invalid(path.Child("qemuGuestAgent", "users").Index(j), u, "must be a user name (1 to 32 characters, no '/', ':' or control characters)"))
			}
		}
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(path, "one of noCloud, configDrive and qemuGuestAgent"))
	case 1:
	default:
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("only one propagation method may be set; %v are", set)))
	}
	return errs
}
