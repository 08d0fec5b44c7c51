package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// secretVMI is a tiny VMI on node whose containerDisk is image (with pull secret pullSecret and
// policy IfNotPresent when given) and, when userDataSecret is set, whose NoCloud user-data comes
// from that Secret.
func secretVMI(name, node, image, pullSecret, userDataSecret string) string {
	m := fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 5
  nodeSelector: {kubernetes.io/hostname: %s}
  domain:
    resources: {requests: {memory: 128Mi}}
    devices:
      disks:
        - {name: containerdisk, disk: {bus: virtio}}
        - {name: cloudinit, cdrom: {bus: sata}}
  volumes:
    - name: containerdisk
      containerDisk:
        image: %s
        imagePullPolicy: IfNotPresent
`, name, node, image)
	if pullSecret != "" {
		m += "        imagePullSecret: " + pullSecret + "\n"
	}
	if userDataSecret != "" {
		return m + "    - name: cloudinit\n      cloudInitNoCloud:\n        secretRef: {name: " + userDataSecret + "}\n"
	}
	return m + "    - name: cloudinit\n      cloudInitNoCloud:\n        userData: \"#!/bin/sh\\necho inline\"\n"
}

// waitSynchronizedFalse waits for Synchronized False with the kubelet's reason for an image it
// cannot pull (ErrImagePull, or ImagePullBackOff between attempts) and a message containing
// every one of want.
func waitSynchronizedFalse(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	waitVMI(t, ns, name, 60*time.Second, fmt.Sprintf("Synchronized False ErrImagePull saying %q", want), func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstanceSynchronized)
		if c == nil || c.Status != v1.ConditionFalse || (c.Reason != "ErrImagePull" && c.Reason != "ImagePullBackOff") {
			return false
		}
		for _, w := range want {
			if !strings.Contains(c.Message, w) {
				return false
			}
		}
		return true
	})
}

// TestVMISecrets: a VMI whose containerDisk is private (pulled by the kubelet with its
// imagePullSecret, one of the launcher Pod's imagePullSecrets) and whose user-data comes from a
// Secret boots and runs that user-data; without a pull secret or with a wrong one the image is
// not pulled (the kubelet's ErrImagePull naming the image, on the VMI); another namespace cannot
// run the node's copy of the private image by naming it (the kubelet verifies a Pod's
// credentials for an image pulled with credentials); and a missing user-data Secret is named
// on the VMI.
func TestVMISecrets(t *testing.T) {
	t.Parallel()
	owner, other := namespace(t), namespace(t)
	node, otherNode := cluster.NodeNames()[0], cluster.NodeNames()[1]
	start := time.Now()
	step := func(what string) { t.Logf("%5.1fs %s", time.Since(start).Seconds(), what) }
	image := cluster.PrivateContainerDiskImage("tiny")
	creds, err := cluster.RegistryCredentials()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "userdata.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"SECRET-USERDATA-RAN on $(hostname)\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", owner, "create", "secret", "generic", "ud", "--from-file=userdata="+script)
	kubectl(t, "-n", owner, "create", "secret", "docker-registry", "regcred", "--docker-server="+cluster.RegistryAddress(),
		"--docker-username="+creds.Username, "--docker-password="+creds.Password)
	kubectl(t, "-n", other, "create", "secret", "docker-registry", "guess", "--docker-server="+cluster.RegistryAddress(),
		"--docker-username="+creds.Username, "--docker-password=not-the-password")

	apply := func(ns, manifest string) { kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, manifest)) }
	apply(owner, secretVMI("private", node, image, "regcred", "ud"))
	// The failures on the other node, so that they take no CPU from the guest's boot.
	apply(owner, secretVMI("nopull", otherNode, image, "", ""))
	apply(other, secretVMI("wrongpull", otherNode, image, "guess", ""))
	apply(owner, secretVMI("nosecret", otherNode, cluster.ContainerDiskImage("tiny"), "", "no-such-secret"))

	con := openConsole(t, owner, "private")
	step("private: console open")
	con.waitFor(t, "SECRET-USERDATA-RAN on private", 120*time.Second)
	step("private: user-data from the Secret ran")
	waitPhase(t, owner, "private", v1.Running, 30*time.Second)

	waitSynchronizedFalse(t, owner, "nopull", image)
	waitSynchronizedFalse(t, other, "wrongpull", image)
	step("nopull and wrongpull: ErrImagePull")
	waitVMI(t, owner, "nosecret", 60*time.Second, "Ready False FailedMount naming the Secret", func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstanceReady)
		return v.Status.Phase == v1.Scheduling && c != nil && c.Reason == "FailedMount" && strings.Contains(c.Message, `"no-such-secret"`)
	})
	step("nosecret: FailedMount")

	// The image is now on node, pulled with credentials: another namespace naming it without
	// any (IfNotPresent) is refused.
	apply(other, secretVMI("thief", node, image, "", ""))
	waitSynchronizedFalse(t, other, "thief", image)
	step("thief: refused")
	if v := waitPhase(t, other, "thief", v1.Scheduling, time.Second); v.Status.NodeName != "" {
		t.Errorf("thief runs on %s", v.Status.NodeName)
	}
	kubectl(t, "-n", owner, "delete", "vmi", "--all", "--wait=false")
	kubectl(t, "-n", other, "delete", "vmi", "--all", "--wait=false")
}
