package disks

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// ReadMountedSecretData reads every key of the Secret mounted at dir (a path the launcher builds
// from constants), in key order, each file as ReadMountedSecret reads it. The kubelet's own
// entries (..data, ..<timestamp>) are not keys.
func ReadMountedSecretData(dir string) ([]string, map[string][]byte, error) {
	root, err := openDir(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	names, err := root.f.Readdirnames(-1)
	if err != nil {
		return nil, nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	// Readdirnames moved the directory's offset, which openat2 does not mind.
	slices.Sort(names)
	var keys []string
	data := map[string][]byte{}
	for _, name := range names {
		if strings.HasPrefix(name, "..") {
			continue
		}
		b, err := readBeneath(root, name)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, name)
		data[name] = b
	}
	return keys, data, nil
}

// AuthorizedKeys are the SSH public keys of the Secret mounted at dir: every non-empty line of
// every value that is not a comment, in key order.
func AuthorizedKeys(dir string) ([]string, error) {
	keys, data, err := ReadMountedSecretData(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		sc := bufio.NewScanner(bytes.NewReader(data[k]))
		sc.Buffer(make([]byte, 0, 64<<10), protocol.MaxSecretFileBytes)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("key %s: %w", k, err)
		}
	}
	return out, nil
}

// cloudInitPublicKeys are the SSH keys of vmi's access credentials propagated by the cloud-init
// volume kind (noCloud for cloudInitNoCloud, configDrive for cloudInitConfigDrive), read from
// where the launcher Pod mounts their Secrets (dir: protocol.AccessCredentialsDir).
func cloudInitPublicKeys(vmi *v1.VirtualMachineInstance, configDrive bool, dir string) ([]string, error) {
	var out []string
	for i, ac := range vmi.Spec.AccessCredentials {
		ssh := ac.SSHPublicKey
		if ssh == nil || (configDrive && ssh.PropagationMethod.ConfigDrive == nil) || (!configDrive && ssh.PropagationMethod.NoCloud == nil) {
			continue
		}
		if dir == "" {
			return nil, fmt.Errorf("spec.accessCredentials[%d]: the launcher knows no directory its access credentials are mounted in", i)
		}
		keys, err := AuthorizedKeys(strings.TrimSuffix(dir, "/") + "/" + protocol.AccessCredentialMountName(i))
		if err != nil {
			return nil, fmt.Errorf("spec.accessCredentials[%d].sshPublicKey: reading its Secret: %w", i, err)
		}
		out = append(out, keys...)
	}
	return out, nil
}
