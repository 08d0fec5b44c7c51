package e2e

import (
	"encoding/base64"
	"fmt"
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
// VMI says AccessCredentialsSynchronized.
func TestAccessCredentials(t *testing.T) {
	ns := namespace(t)
	kubectl(t, "-n", ns, "create", "secret", "generic", "boot-key", "--from-literal=key=ssh-ed25519 AAAABOOT boot@e2e")
	kubectl(t, "-n", ns, "create", "secret", "generic", "agent-key", "--from-literal=key=ssh-ed25519 AAAAAGENT agent@e2e")
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
	con.waitFor(t, "KEYS ssh-ed25519 AAAAAGENT agent@e2e", 30*time.Second)
	con.send(t, `h=$(grep ^root: /etc/shadow | cut -d: -f2); [ -n "$h" ] && [ "$(mkpasswd -m sha512 -S "$(echo "$h" | cut -d'$' -f3)" s3cret-e2e)" = "$h" ] && echo PASSWORD-SET`)
	con.waitFor(t, "PASSWORD-SET", 30*time.Second)

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
