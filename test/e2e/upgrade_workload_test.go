package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// updateWorkloads, after the upgrade and steady's move by vireoctl migrate: the guests still
// in the old launcher (mover, live-migratable; evictee, on a ReadWriteOnce volume, not) carry
// kubevirt.io/outdatedLauncherImage and are counted in the KubeVirt object's status, and
// nothing has moved them. Once spec.workloadUpdateStrategy lists LiveMigrate and Evict, mover
// is live-migrated to the new launcher by a migration vireo-controller creates (its boot id
// unchanged), and evictee's launcher Pod is evicted: its VM starts it again, on the new
// launcher. Then no VMI is outdated.
func (w *upgradeWorkload) updateWorkloads(t *testing.T, newLauncher string) {
	ns := w.ns
	waitOutdated(t, ns, "mover", "evictee")
	for _, name := range []string{"mover", "evictee"} {
		vmi := waitPhase(t, ns, name, v1.Running, time.Minute)
		if !strings.HasSuffix(vmi.Status.LauncherContainerImageVersion, w.oldLauncher) {
			t.Fatalf("without a workload update strategy %s moved to launcher %q", name, vmi.Status.LauncherContainerImageVersion)
		}
	}

	throttleMigrations(t, "")
	t.Cleanup(func() { patchSettings(t, `{"workloadUpdateStrategy":null}`) })
	began := time.Now()
	patchSettings(t, `{"workloadUpdateStrategy":{"workloadUpdateMethods":["LiveMigrate","Evict"],"batchEvictionInterval":"10s"}}`)

	waitVMI(t, ns, "mover", 4*time.Minute, "moved to the new launcher", func(v *v1.VirtualMachineInstance) bool {
		ms := v.Status.MigrationState
		return ms != nil && ms.Completed && strings.HasSuffix(v.Status.LauncherContainerImageVersion, newLauncher)
	})
	t.Logf("mover live-migrated to the new launcher %s after the strategy was set", time.Since(began).Round(100*time.Millisecond))
	ms, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(t.Context(), metav1.ListOptions{LabelSelector: v1.MigrationSelectorLabel + "=mover"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ms.Items, func(m v1.VirtualMachineInstanceMigration) bool {
		_, ok := m.Annotations[v1.WorkloadUpdateMigrationAnnotation]
		return ok && m.Status.Phase == v1.MigrationSucceeded
	}) {
		t.Errorf("no Succeeded migration of mover annotated %s among %d", v1.WorkloadUpdateMigrationAnnotation, len(ms.Items))
	}
	con, _ := answeringConsole(t, ns, "mover")
	if now := guestBootID(t, con); now != w.bootIDs["mover"] {
		t.Errorf("mover rebooted moving to the new launcher: boot id %s, was %s", now, w.bootIDs["mover"])
	}
	con.ws.Close()

	waitVMI(t, ns, "evictee", 4*time.Minute, "started again on the new launcher", func(v *v1.VirtualMachineInstance) bool {
		return string(v.UID) != w.evicteeUID && v.Status.Phase == v1.Running && strings.HasSuffix(v.Status.LauncherContainerImageVersion, newLauncher)
	})
	took := time.Since(began)
	t.Logf("evictee evicted and started again on the new launcher %s after the strategy was set", took.Round(100*time.Millisecond))
	recordFigure("upgrade.workload_update_seconds", took.Seconds(), "s",
		"after the upgrade, from workloadUpdateStrategy [LiveMigrate, Evict] until both outdated guests ran the new launcher (one live-migrated, its boot id unchanged; one evicted and started again by its VM)")
	waitOutdated(t, ns)
}

// waitOutdated waits until exactly the VMIs names of namespace ns carry the outdated label, and
// the KubeVirt object's status counts as many as carry it in the cluster.
func waitOutdated(t *testing.T, ns string, names ...string) {
	t.Helper()
	selector := metav1.ListOptions{LabelSelector: v1.OutdatedLauncherImageLabel}
	eventuallyWithin(t, fmt.Sprintf("outdated VMIs %v in %s", names, ns), time.Minute, func() error {
		list, err := vireo.KubevirtV1().VirtualMachineInstances(ns).List(context.Background(), selector)
		if err != nil {
			return err
		}
		var got []string
		for _, vmi := range list.Items {
			got = append(got, vmi.Name)
		}
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
			return fmt.Errorf("labelled %v, want %v", got, want)
		}
		all, err := vireo.KubevirtV1().VirtualMachineInstances("").List(context.Background(), selector)
		if err != nil {
			return err
		}
		kv, err := vireo.KubevirtV1().KubeVirts(v1.InstallNamespace).Get(context.Background(), settingsName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n := kv.Status.OutdatedVirtualMachineInstanceWorkloads; n == nil || int(*n) != len(all.Items) {
			return fmt.Errorf("status.outdatedVirtualMachineInstanceWorkloads %v, want %d (labelled in the cluster)", n, len(all.Items))
		}
		return nil
	})
}
