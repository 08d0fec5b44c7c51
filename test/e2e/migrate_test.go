package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// vireoctl runs the vireoctl binary with the cluster's kubeconfig.
func vireoctl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), filepath.Join(cluster.Options().BinDir, "vireoctl"),
		append([]string{"--kubeconfig", cluster.Options().Kubeconfig()}, args...)...).CombinedOutput()
	return string(out), err
}

// liveMigratable waits for the VMI's LiveMigratable condition and returns it.
func liveMigratable(t *testing.T, ns, name string) v1.VirtualMachineInstanceCondition {
	t.Helper()
	var cond v1.VirtualMachineInstanceCondition
	waitVMI(t, ns, name, 2*time.Minute, "the LiveMigratable condition", func(v *v1.VirtualMachineInstance) bool {
		for _, c := range v.Status.Conditions {
			if c.Type == v1.VirtualMachineInstanceIsMigratable {
				cond = c
				return true
			}
		}
		return false
	})
	return cond
}

// TestMigrateRequests: the migrate subresources of VMs and VMIs, as KubeVirt's: a user needs
// kubevirt.io:migrate; a dry run creates nothing; a migration is created with KubeVirt's name
// and shown by kubectl get vmim; a second one while it is in flight and a migration of a VMI on
// an unshared claim are refused with the reason; vireoctl migrate-cancel deletes the one in
// flight.
func TestMigrateRequests(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vm-demo.yaml")
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeWith("extra", "    blank: {}\n", "16Mi")))
	applyExample(t, ns, "vm-demo.yaml", func(m string) string {
		m = strings.Replace(m, "name: demo", "name: local", 1)
		m = strings.Replace(m, "devices: {}", "devices:\n          disks:\n            - name: rootdisk\n            - name: extra", 1)
		return m + "        - name: extra\n          dataVolume:\n            name: extra\n"
	})
	waitPhase(t, ns, "demo", v1.Running, 2*time.Minute)
	if c := liveMigratable(t, ns, "demo"); c.Status != v1.ConditionTrue {
		t.Errorf("a containerDisk VMI with masquerade: LiveMigratable %+v, want True", c)
	}

	bind(t, ns, "mover", "kubevirt.io:edit")
	mover := userClient(t, "mover")
	eventually(t, "an editor without kubevirt.io:migrate is refused", func() error {
		if code, msg := putSubresource(t, mover, "subresources.kubevirt.io", ns, "virtualmachines", "demo", "migrate", "{}"); code != 403 {
			return fmt.Errorf("migrate: %d %s, want 403", code, msg)
		}
		return nil
	})
	bind(t, ns, "mover", "kubevirt.io:migrate")
	eventually(t, "a dry run by a user with kubevirt.io:migrate", func() error {
		if code, msg := putSubresource(t, mover, "subresources.kubevirt.io", ns, "virtualmachines", "demo", "migrate", `{"dryRun":["All"]}`); code != 202 {
			return fmt.Errorf("migrate (dry run): %d %s, want 202", code, msg)
		}
		return nil
	})
	if code, msg := putSubresource(t, mover, "subresources.kubevirt.io", ns, "virtualmachines", "demo", "migrate", `{"dryRun":["all"]}`); code != 400 || !strings.Contains(msg, `dryRun "all"`) {
		t.Errorf("migrate with a misspelt dry run: %d %s, want 400 naming it", code, msg)
	}
	if list, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(t.Context(), metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("a dry run created migrations: %v %v", list, err)
	}

	if out, err := vireoctl(t, "-n", ns, "migrate", "demo"); err != nil || !strings.Contains(out, "VM demo was scheduled to migrate") {
		t.Fatalf("vireoctl migrate: %v\n%s", err, out)
	}
	list, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || !strings.HasPrefix(list.Items[0].Name, "kubevirt-migrate-vm-") || list.Items[0].Spec.VMIName != "demo" {
		t.Fatalf("the migration: %+v %v", list, err)
	}
	name := list.Items[0].Name
	if row := kubectl(t, "-n", ns, "get", "vmim", "--no-headers"); !strings.Contains(row, name) || !strings.Contains(row, "demo") {
		t.Errorf("kubectl get vmim: %q", row)
	}
	if code, msg := putSubresource(t, mover, "kubevirt.io", ns, "virtualmachineinstances", "demo", "migrate", "{}"); code != 422 || !strings.Contains(msg, "still in flight") {
		t.Errorf("a second migration: %d %q, want 422 in flight", code, msg)
	}
	if out, err := vireoctl(t, "-n", ns, "migrate-cancel", "demo"); err != nil || !strings.Contains(out, name) {
		t.Errorf("vireoctl migrate-cancel: %v\n%s", err, out)
	}
	eventuallyWithin(t, "the cancelled migration is gone", time.Minute, func() error {
		l, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil || len(l.Items) != 0 {
			return fmt.Errorf("%d migrations (%v)", len(l.Items), err)
		}
		return nil
	})

	waitDataVolume(t, ns, "extra", cdiv1beta1.Succeeded, 2*time.Minute)
	waitPhase(t, ns, "local", v1.Running, 2*time.Minute)
	c := liveMigratable(t, ns, "local")
	if c.Status != v1.ConditionFalse || c.Reason != "DisksNotLiveMigratable" || !strings.Contains(c.Message, "PVC extra is not shared") {
		t.Errorf("a VMI on a ReadWriteOnce claim: LiveMigratable %+v, want False DisksNotLiveMigratable", c)
	}
	if out, err := vireoctl(t, "-n", ns, "migrate", "local"); err == nil || !strings.Contains(out, "DisksNotLiveMigratable") {
		t.Errorf("migrating a VMI on an unshared claim: %v\n%s", err, out)
	}
	if out, err := vireoctl(t, "-n", ns, "migrate", "nosuch"); err == nil || !strings.Contains(out, "neither a VirtualMachine nor a VirtualMachineInstance nosuch") {
		t.Errorf("migrating what does not exist: %v\n%s", err, out)
	}
}
