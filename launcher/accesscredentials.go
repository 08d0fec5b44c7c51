package launcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/disks"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// credentialOp is one thing to do through the guest agent: a user's authorized keys or password.
type credentialOp struct {
	User     string   `json:"user"`
	Keys     []string `json:"keys,omitempty"`
	Password string   `json:"password,omitempty"`
	// IsPassword tells a password op from a keys op with no keys (which empties the file).
	IsPassword bool `json:"isPassword,omitempty"`
}

// credentialOps reads the Secrets of creds' qemuGuestAgent credentials, mounted below dir, into
// the agent operations that apply them: for SSH keys, each user's authorized_keys (the keys of
// every credential naming the user); for passwords, each key of the Secret a user, its value the
// password.
func credentialOps(creds []v1.AccessCredential, dir string) ([]credentialOp, error) {
	keysOf := map[string][]string{}
	var users []string
	var ops []credentialOp
	for i, ac := range creds {
		mount := dir + "/" + protocol.AccessCredentialMountName(i)
		switch {
		case ac.SSHPublicKey != nil && ac.SSHPublicKey.PropagationMethod.QemuGuestAgent != nil:
			keys, err := disks.AuthorizedKeys(mount)
			if err != nil {
				return nil, fmt.Errorf("spec.accessCredentials[%d].sshPublicKey: reading its Secret: %w", i, err)
			}
			for _, u := range ac.SSHPublicKey.PropagationMethod.QemuGuestAgent.Users {
				if _, ok := keysOf[u]; !ok {
					users = append(users, u)
				}
				keysOf[u] = append(keysOf[u], keys...)
			}
		case ac.UserPassword != nil && ac.UserPassword.PropagationMethod.QemuGuestAgent != nil:
			names, data, err := disks.ReadMountedSecretData(mount)
			if err != nil {
				return nil, fmt.Errorf("spec.accessCredentials[%d].userPassword: reading its Secret: %w", i, err)
			}
			for _, u := range names {
				ops = append(ops, credentialOp{User: u, Password: string(data[u]), IsPassword: true})
			}
		}
	}
	for _, u := range users {
		ops = append(ops, credentialOp{User: u, Keys: unique(keysOf[u])})
	}
	return ops, nil
}

// syncAccessCredentials applies the VMI's qemuGuestAgent access credentials through the guest
// agent when the Secrets changed since they were last applied, or the last try failed. The
// status says how it went (the VMI's AccessCredentialsSynchronized condition).
func (l *launcher) syncAccessCredentials(ctx context.Context, name string) {
	l.mu.Lock()
	creds := l.credentials
	l.mu.Unlock()
	if !slices.ContainsFunc(creds, func(ac v1.AccessCredential) bool {
		return (ac.SSHPublicKey != nil && ac.SSHPublicKey.PropagationMethod.QemuGuestAgent != nil) ||
			(ac.UserPassword != nil && ac.UserPassword.PropagationMethod.QemuGuestAgent != nil)
	}) {
		return
	}
	ops, err := credentialOps(creds, protocol.AccessCredentialsDir)
	digest := ""
	if err == nil {
		b, _ := json.Marshal(ops)
		sum := sha256.Sum256(b)
		digest = hex.EncodeToString(sum[:])
		if st := l.hub.get().AccessCredentials; st != nil && st.Synced && digest == l.credentialsDigest {
			return
		}
		err = l.applyCredentials(ctx, name, ops)
	}
	result := &protocol.CredentialsStatus{Synced: err == nil}
	if err != nil {
		result.Message = err.Error()
		klog.InfoS("Access credentials not applied", "err", err)
	} else {
		l.credentialsDigest = digest
		klog.InfoS("Access credentials applied through the guest agent", "operations", len(ops))
	}
	l.hub.update(func(st *protocol.DomainStatus) { st.AccessCredentials = result })
}

// applyCredentials carries out ops through the guest agent.
func (l *launcher) applyCredentials(ctx context.Context, name string, ops []credentialOp) error {
	for _, op := range ops {
		if op.IsPassword {
			if err := l.conn.SetUserPassword(ctx, name, op.User, op.Password); err != nil {
				return fmt.Errorf("setting the password of guest user %q: %w", op.User, err)
			}
			continue
		}
		if err := l.conn.SetAuthorizedKeys(ctx, name, op.User, op.Keys); err != nil {
			return fmt.Errorf("writing the authorized keys of guest user %q: %w", op.User, err)
		}
	}
	return nil
}

// unique is keys without repeats, in first-seen order.
func unique(keys []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
