package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// sharedClaim is a blank ReadWriteMany DataVolume: vireo-local's hostPath volumes are one
// directory of this machine, shared storage for both nodes.
const sharedClaim = `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: shared
spec:
  source:
    blank: {}
  storage:
    accessModes: [ReadWriteMany]
    resources:
      requests:
        storage: 16Mi
`

// TestLiveMigrationSharedClaim: a VMI with a ReadWriteMany DataVolume beside its containerDisk
// is LiveMigratable and moves to the other node without its claim being copied: what the guest
// wrote to the claim's disk before is read back after, and what it writes on the target lands
// in the claim's own disk.img, the one file both launchers opened.
func TestLiveMigrationSharedClaim(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, sharedClaim))
	applyExample(t, ns, "vmi-tiny.yaml", func(m string) string {
		m = strings.Replace(m, "            bus: virtio\n", "            bus: virtio\n        - name: shared\n          disk:\n            bus: virtio\n", 1)
		return m + "    - name: shared\n      dataVolume:\n        name: shared\n"
	})
	vmi := waitPhase(t, ns, "tiny", v1.Running, 3*time.Minute)
	if c := liveMigratable(t, ns, "tiny"); c.Status != v1.ConditionTrue {
		t.Fatalf("a VMI with a ReadWriteMany claim: LiveMigratable %+v, want True", c)
	}
	disk := filepath.Join(claimDir(t, ns, "shared"), "disk.img")
	source := vmi.Status.NodeName
	con := openConsole(t, ns, "tiny")
	con.waitFor(t, guestMarker, 90*time.Second)
	con.send(t, "echo VIREO-BEFORE-MOVE | dd of=/dev/vdb conv=fsync 2>/dev/null; echo WROTE$((40+2))")
	con.waitFor(t, "WROTE42", 20*time.Second)
	diskHolds(t, disk, "VIREO-BEFORE-MOVE")

	m := startMigration(t, ns, "tiny", "")
	m = waitMigration(t, ns, m.Name, v1.MigrationSucceeded, 3*time.Minute)
	target := m.Status.MigrationState.TargetNode
	if target == source {
		t.Fatalf("the migration stayed on %s", source)
	}
	vmi = waitVMI(t, ns, "tiny", time.Minute, "running on the target alone", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && v.Status.NodeName == target && len(v.Status.ActivePods) == 1
	})
	moved := openConsoleIn(t, launcherDir(vmi))
	moved.send(t, "head -c 17 /dev/vdb; echo; echo VIREO-AFTER-MOVE | dd of=/dev/vdb bs=512 seek=1 conv=fsync 2>/dev/null; echo READ$((40+2))")
	moved.waitFor(t, "READ42", 30*time.Second)
	// The typed command line does not hold the marker: only the disk's bytes can.
	if out := moved.output(); !strings.Contains(out, "VIREO-BEFORE-MOVE") {
		t.Errorf("the guest on the target read back no marker from its claim; console:\n%s", out)
	}
	diskHolds(t, disk, "VIREO-AFTER-MOVE")

	// The guest that arrived moves on, back to where it came from (a target launcher is a
	// source like any other once its guest arrived).
	m = startMigration(t, ns, "tiny", "")
	m = waitMigration(t, ns, m.Name, v1.MigrationSucceeded, 3*time.Minute)
	if ms := m.Status.MigrationState; ms.SourceNode != target || ms.TargetNode != source {
		t.Errorf("the second migration went from %s to %s, want %s to %s", ms.SourceNode, ms.TargetNode, target, source)
	}
	vmi = waitVMI(t, ns, "tiny", time.Minute, "running back on the source alone", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && v.Status.NodeName == source && len(v.Status.ActivePods) == 1
	})
	back := openConsoleIn(t, launcherDir(vmi))
	back.send(t, "dd if=/dev/vdb bs=512 skip=1 count=1 2>/dev/null | head -c 16; echo; echo BACK$((40+2))")
	back.waitFor(t, "BACK42", 30*time.Second)
	if !strings.Contains(back.output(), "VIREO-AFTER-MOVE") {
		t.Errorf("back on the source, the guest read no second marker; console:\n%s", back.output())
	}
}

// diskHolds waits until file holds text (the guest's fsync reached the shared volume).
func diskHolds(t *testing.T, file, text string) {
	t.Helper()
	eventuallyWithin(t, file+" holds "+text, 20*time.Second, func() error {
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if !bytes.Contains(b[:min(len(b), 4096)], []byte(text)) {
			return fmt.Errorf("not there")
		}
		return nil
	})
}
