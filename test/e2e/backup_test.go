package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestBackupAndRestore: `vireo-local backup` saves Vireo's etcd while it serves; after
// changes (objects deleted, one created, a setting changed) `vireo-local restore` brings back
// exactly what was saved: the VM, the DataVolume, the migration and the setting, and not the
// object made since. The running guest is not restarted (the same QEMU process) and is adopted
// again: its node agent carries out an action on it; and the controller reconciles anew.
func TestBackupAndRestore(t *testing.T) {
	ns := namespace(t)
	ctx := t.Context()
	applyExample(t, ns, "vmi-tiny.yaml", func(m string) string {
		return strings.Replace(m, "  terminationGracePeriodSeconds: 10\n", "  terminationGracePeriodSeconds: 10\n  startStrategy: Paused\n", 1)
	})
	vmi := waitPhase(t, ns, "tiny", v1.Running, 90*time.Second)
	qemu, _ := guestProcesses(t, ns, "tiny", string(vmi.UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes of the guest: %v, want one", qemu)
	}
	vm, err := vireo.KubevirtV1().VirtualMachines(ns).Create(ctx, haltedVM("saved"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeWith("saved", "    blank: {}\n", "16Mi")))
	// A VMI that stays Scheduling (no node matches), and a migration of it, which fails.
	parked := vmiNamed("parked")
	parked.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "no-such-node"}
	if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, parked, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceMigration
metadata: {name: saved, namespace: %s}
spec: {vmiName: parked}
`, ns)))
	setting := func(value string) {
		kubectl(t, "-n", v1.InstallNamespace, "annotate", "--overwrite", "kubevirts.kubevirt.io/kubevirt", "e2e.vireo.dev/backup="+value)
	}
	setting("saved")

	// The restore rewinds every namespace: one that earlier tests are still deleting would get
	// its Vireo objects back after kube-apiserver removed it.
	eventuallyWithin(t, "the namespaces of earlier tests gone", 3*time.Minute, func() error {
		list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, n := range list.Items {
			if n.Name != ns && n.Status.Phase == corev1.NamespaceTerminating {
				return fmt.Errorf("namespace %s is still being deleted", n.Name)
			}
		}
		return nil
	})
	file := filepath.Join(t.TempDir(), "vireo.db")
	if err := cluster.Backup(ctx, file); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "delete", "vm", "saved")
	kubectl(t, "-n", ns, "delete", "datavolume", "saved", "--wait=false")
	kubectl(t, "-n", ns, "delete", "vmim", "saved")
	if _, err := vireo.KubevirtV1().VirtualMachines(ns).Create(ctx, haltedVM("made-after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setting("changed")

	start := time.Now()
	if err := cluster.Restore(ctx, file); err != nil {
		t.Fatal(err)
	}
	t.Logf("restored in %s", time.Since(start).Round(time.Millisecond))
	recordFigure("restore_s", time.Since(start).Seconds(), "s", "vireo-local restore: vireo-apiserver down, etcd replaced, back and Available")

	if got, err := vireo.KubevirtV1().VirtualMachines(ns).Get(ctx, "saved", metav1.GetOptions{}); err != nil || got.UID != vm.UID {
		t.Errorf("VM saved after the restore: %v (err %v), want uid %s", got, err, vm.UID)
	}
	if _, err := vireo.KubevirtV1().VirtualMachines(ns).Get(ctx, "made-after", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("VM made after the backup: %v, want it gone", err)
	}
	if _, err := vireo.CdiV1beta1().DataVolumes(ns).Get(ctx, "saved", metav1.GetOptions{}); err != nil {
		t.Errorf("DataVolume after the restore: %v", err)
	}
	if _, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(ctx, "saved", metav1.GetOptions{}); err != nil {
		t.Errorf("migration after the restore: %v", err)
	}
	if got := kubectl(t, "-n", v1.InstallNamespace, "get", "kubevirts.kubevirt.io", "kubevirt", "-o", `jsonpath={.metadata.annotations.e2e\.vireo\.dev/backup}`); got != "saved" {
		t.Errorf("setting after the restore: %q, want saved", got)
	}
	if err := syscall.Kill(qemu[0], 0); err != nil {
		t.Fatalf("the guest's QEMU (pid %d) is gone after the restore: %v", qemu[0], err)
	}
	checkAdopted(t, ns, "tiny", vmi.UID, qemu[0])
	// The controller relisted (the restore compacted the revisions it had watched): it makes
	// the launcher Pod of a VMI created now.
	after := vmiNamed("after-restore")
	after.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "no-such-node"}
	after.Spec.Volumes[0].ContainerDisk.Image = cluster.RegistryAddress() + "/vireo/tiny-containerdisk:latest"
	if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, after, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, ns, after.Name, v1.Scheduling, 30*time.Second)
}

// checkAdopted checks that the guest of VMI ns/name is served again after a restore: still
// Running with the same uid and QEMU process, and unpaused by its node agent on request.
func checkAdopted(t *testing.T, ns, name string, uid types.UID, qemu int) {
	t.Helper()
	got := waitPhase(t, ns, name, v1.Running, 30*time.Second)
	if got.UID != uid {
		t.Fatalf("VMI %s after the restore has uid %s, want %s", name, got.UID, uid)
	}
	path := fmt.Sprintf("/apis/subresources.kubevirt.io/v1/namespaces/%s/virtualmachineinstances/%s/unpause", ns, name)
	eventually(t, "unpause of the restored VMI accepted", func() error {
		return vireo.Discovery().RESTClient().Put().AbsPath(path).Body([]byte("{}")).Do(t.Context()).Error()
	})
	waitVMI(t, ns, name, 30*time.Second, "no Paused condition", func(v *v1.VirtualMachineInstance) bool {
		return conditionOf(v, v1.VirtualMachineInstancePaused) == nil
	})
	if now, _ := guestProcesses(t, ns, name, string(uid)); len(now) != 1 || now[0] != qemu {
		t.Errorf("QEMU processes after the restore: %v, want the same one (%d)", now, qemu)
	}
}
