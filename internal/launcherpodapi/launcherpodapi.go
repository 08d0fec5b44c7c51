// Package launcherpodapi is the launcher Pod as every party knows it: vireo-controller, which
// renders and names it (controllers/launcherpod), the node agent, which finds it on its node,
// reaches its emptyDir and tells a VMI's current launcher from a migration's other one, and the
// tests. Its names, labels and the reading of how a launcher Pod ended live here once, so that
// no binary imports another's package to agree on them.
package launcherpodapi

import (
	"crypto/sha256"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

const (
	// ContainerName is the name of the launcher's container (KubeVirt's).
	ContainerName = v1.LauncherContainerName
	// NamePrefix starts the name of every launcher Pod: virt-launcher-<vmi name>-<5 characters>,
	// KubeVirt's shape, with the suffix derived from the VMI's UID (see PodName).
	NamePrefix = "virt-launcher-"
	// DomainAnnotation on a launcher Pod names the VMI (the libvirt domain) it runs.
	DomainAnnotation = "kubevirt.io/domain"
	// VirtualMachineNameLabel on a launcher Pod names the VirtualMachine that owns its VMI.
	VirtualMachineNameLabel = "vm.kubevirt.io/name"
	// RunDirVolumeName is the emptyDir the launcher shares with its node agent, mounted at
	// protocol.LauncherDir: the command, console and VNC sockets, and the node's QEMU
	// capabilities seed the agent copies in. The agent finds it where the kubelet keeps it
	// (protocol.PodVolumeDir), so the Pod needs no hostPath: it passes Pod Security baseline.
	RunDirVolumeName = "run"
	// LauncherUser is the uid and gid the launcher runs as: KubeVirt's non-root launcher user
	// (qemu, 107), which libvirt in session mode (qemu:///session) needs no root for.
	LauncherUser int64 = 107
)

// suffixAlphabet is the alphabet of Kubernetes' generated name suffixes (no vowels, no
// look-alike characters), so a launcher Pod's name looks as it does under KubeVirt.
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// PodName is the launcher Pod's name for a VMI: virt-launcher-<vmi name>-<5 characters> as
// KubeVirt's generated names, but with the suffix derived from salt (the VMI's UID for its first
// launcher, a migration's UID for a migration target). The name is deterministic, so a create
// retried after a lost response or from a stale cache finds the Pod it made instead of making a
// second one.
func PodName(vmiName, salt string) string {
	suffix := NameSuffix(salt)
	maxName := validation.DNS1123SubdomainMaxLength - len(NamePrefix) - len(suffix) - 1
	if len(vmiName) > maxName {
		vmiName = vmiName[:maxName]
	}
	return NamePrefix + vmiName + "-" + suffix
}

// NameSuffix is 5 characters of suffixAlphabet derived from salt.
func NameSuffix(salt string) string {
	sum := sha256.Sum256([]byte(salt))
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = suffixAlphabet[int(sum[i])%len(suffixAlphabet)]
	}
	return string(suffix)
}

// KernelBootVolumeName is the launcher Pod's image volume of kernelBoot.container.
const KernelBootVolumeName = "kernel-boot"

// ContainerDiskVolumeName is the launcher Pod's image volume of the VMI's containerDisk
// volume (a DNS-1123 label; shortened as other volumes are when the prefix makes it too long).
func ContainerDiskVolumeName(volume string) string {
	name := "containerdisk-" + volume
	if len(name) > validation.DNS1123LabelMaxLength {
		name = "containerdisk-" + NameSuffix(volume)
	}
	return name
}

// CurrentPodName is the name of the launcher Pod the VMI runs in now: the target Pod of its
// last migration once that migration completed, the source Pod of a migration that is in
// flight or failed (the guest is still there), and the VMI's own first launcher Pod when it
// was never migrated. The VMI controller follows this Pod; the node agents use it to tell the
// VMI's current launcher from a migration's other one.
func CurrentPodName(vmi *v1.VirtualMachineInstance) string {
	if s := vmi.Status.MigrationState; s != nil {
		if s.Completed && !s.Failed && s.TargetPod != "" {
			return s.TargetPod
		}
		if s.SourcePod != "" {
			return s.SourcePod
		}
	}
	return PodName(vmi.Name, string(vmi.UID))
}

// Started reports whether a launcher Pod is bound, running and not being deleted, with its
// compute container running and its other containers (none today) ready. The compute container's
// readiness is left out: it carries the VMI's readiness probe, which passes only once the guest
// runs, and the guest starts only in a started Pod (KubeVirt's rule).
func Started(pod *corev1.Pod) bool {
	if pod == nil || pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return false
	}
	compute := false
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.Name == ContainerName:
			compute = cs.State.Running != nil
		case !cs.Ready:
			return false
		}
	}
	return compute
}

// Ended reports whether a launcher Pod has ended: the Pod has a final phase, or its compute
// container has terminated (restartPolicy Never: it will not run again).
func Ended(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == ContainerName && cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

// EndMessage says how a launcher Pod ended, from its compute container when it can.
func EndMessage(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != ContainerName || cs.State.Terminated == nil {
			continue
		}
		t := cs.State.Terminated
		msg := fmt.Sprintf("container %s exited with code %d", cs.Name, t.ExitCode)
		if t.Reason != "" {
			msg += " (" + t.Reason + ")"
		}
		if t.Message != "" {
			msg += ": " + t.Message
		}
		return msg
	}
	msg := "Pod phase " + string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		msg += " (" + pod.Status.Reason + ")"
	}
	if pod.Status.Message != "" {
		msg += ": " + pod.Status.Message
	}
	return msg
}
