package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// credentialsUserData prints the NoCloud meta-data the guest booted with.
const credentialsUserData = "#!/bin/sh\necho \"META $(tr '\\n' ' ' < /mnt/cidata/meta-data)\"\n"

// TestAccessCredentials: KubeVirt's accessCredentials. An SSH key propagated by noCloud is in
// the NoCloud meta-data's public-keys; one propagated by qemuGuestAgent is written into root's
// authorized_keys through the guest agent, and again when its Secret changes; a userPassword
// sets root's password through the agent (the guest's chpasswd hashes it into /etc/shadow); the
// VMI says AccessCredentialsSynchronized; vireoctl ssh logs in with the agent-propagated key.
func TestAccessCredentials(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "-n", ns, "create", "secret", "generic", "boot-key", "--from-literal=key=ssh-ed25519 AAAABOOT boot@e2e")
	// The agent's key is a real one: vireoctl ssh logs in with it.
	keyDir := t.TempDir()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "agent@e2e", "-f", filepath.Join(keyDir, "id")).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	agentKey, err := os.ReadFile(filepath.Join(keyDir, "id.pub"))
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "create", "secret", "generic", "agent-key", "--from-literal=key="+strings.TrimSpace(string(agentKey)))
	kubectl(t, "-n", ns, "create", "secret", "generic", "passwords", "--from-literal=root=s3cret-e2e")
	manifest := fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: creds}
spec:
  terminationGracePeriodSeconds: 5
  domain:
    resources: {requests: {memory: 128Mi}}
    devices:
      disks:
        - {name: containerdisk, disk: {bus: virtio}}
        - {name: cloudinit, disk: {bus: virtio}}
      interfaces: [{name: default, masquerade: {}, ports: [{name: ssh, port: 22}]}]
  networks: [{name: default, pod: {}}]
  volumes:
    - name: containerdisk
      containerDisk: {image: %s, imagePullPolicy: IfNotPresent}
    - name: cloudinit
      cloudInitNoCloud: {userDataBase64: %s}
  accessCredentials:
    - sshPublicKey:
        source: {secret: {secretName: boot-key}}
        propagationMethod: {noCloud: {}}
    - sshPublicKey:
        source: {secret: {secretName: agent-key}}
        propagationMethod: {qemuGuestAgent: {users: [root]}}
    - userPassword:
        source: {secret: {secretName: passwords}}
        propagationMethod: {qemuGuestAgent: {}}
`, cluster.ContainerDiskImage("tiny"), base64.StdEncoding.EncodeToString([]byte(credentialsUserData)))
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, manifest))
	con := openConsole(t, ns, "creds")
	con.waitFor(t, `public-keys:   "0": "ssh-ed25519 AAAABOOT boot@e2e"`, 2*time.Minute)

	waitVMI(t, ns, "creds", 2*time.Minute, "AccessCredentialsSynchronized True", func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstanceAccessCredentialsSynchronized)
		return c != nil && c.Status == v1.ConditionTrue && c.Reason == v1.ReasonAccessCredentialsSyncSuccess
	})
	con.waitFor(t, guestMarker, time.Minute)
	con.send(t, `echo "KEYS $(cat /root/.ssh/authorized_keys | tr '\n' ' ')"`)
	con.waitFor(t, "KEYS "+strings.TrimSpace(string(agentKey)), 30*time.Second)
	con.send(t, `h=$(grep ^root: /etc/shadow | cut -d: -f2); [ -n "$h" ] && [ "$(mkpasswd -m sha512 -S "$(echo "$h" | cut -d'$' -f3)" s3cret-e2e)" = "$h" ] && echo PASSWORD-SET`)
	con.waitFor(t, "PASSWORD-SET", 30*time.Second)

	// vireoctl ssh logs in with the key, through port-forward (the local ssh client's
	// ProxyCommand is vireoctl port-forward --stdio) and runs a command.
	eventuallyWithin(t, "vireoctl ssh into the guest", time.Minute, func() error {
		out, err := vireoctl(t, "-n", ns, "ssh", "root@vmi/creds", "-i", filepath.Join(keyDir, "id"),
			"-t", "-o StrictHostKeyChecking=no", "-t", "-o UserKnownHostsFile=/dev/null", "-t", "-o LogLevel=ERROR",
			"-c", "echo SSH-OK $(hostname) $(id -u)")
		if err != nil || !strings.Contains(out, "SSH-OK creds 0") {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})

	// vireoctl scp copies a file into the guest and back (OpenSSH's scp speaks SFTP; the
	// guest's Dropbear runs sftp-server for it).
	sent := filepath.Join(keyDir, "sent.txt")
	if err := os.WriteFile(sent, []byte("copied through port-forward\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sshOpts := []string{"-i", filepath.Join(keyDir, "id"), "-t", "-o StrictHostKeyChecking=no", "-t", "-o UserKnownHostsFile=/dev/null", "-t", "-o LogLevel=ERROR"}
	if out, err := vireoctl(t, append([]string{"-n", ns, "scp", sent, "root@vmi/creds:/tmp/received.txt"}, sshOpts...)...); err != nil {
		t.Fatalf("vireoctl scp into the guest: %v: %s", err, out)
	}
	back := filepath.Join(keyDir, "back.txt")
	if out, err := vireoctl(t, append([]string{"-n", ns, "scp", "root@vmi/creds:/tmp/received.txt", back}, sshOpts...)...); err != nil {
		t.Fatalf("vireoctl scp from the guest: %v: %s", err, out)
	}
	if data, err := os.ReadFile(back); err != nil || string(data) != "copied through port-forward\n" {
		t.Errorf("the file back from the guest: %q, %v", data, err)
	}

	// A new key in the Secret reaches the guest: the kubelet updates the mounted Secret and the
	// launcher applies it at its next look (every 30 s while the agent is connected).
	kubectl(t, "-n", ns, "patch", "secret", "agent-key", "-p", `{"stringData":{"key":"ssh-ed25519 AAAAROTATED rotated@e2e"}}`)
	eventuallyWithin(t, "the rotated key in root's authorized_keys", 3*time.Minute, func() error {
		con.send(t, `echo "NOW $(cat /root/.ssh/authorized_keys | tr '\n' ' ')"`)
		if !strings.Contains(con.output(), "NOW ssh-ed25519 AAAAROTATED rotated@e2e") {
			return fmt.Errorf("not yet")
		}
		return nil
	})
}
