package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// chaosMaxImports bounds the DataVolumes a chaos run imports.
const chaosMaxImports = 3

// chaosImage is what the chaos run's imports fetch: the test guest's raw disk, with its checksum.
type chaosImage struct {
	data          []byte
	url, checksum string
}

// serveChaosImage serves the test guest's raw disk to the chaos run's imports.
func (c *chaos) serveChaosImage() {
	data := tinyDisk(c.t, "disk.raw")
	sum := sha256.Sum256(data)
	srv := serveImages(c.t, map[string][]byte{"disk.raw": data})
	c.image = &chaosImage{data: data, url: srv.base + "/disk.raw", checksum: "sha256:" + hex.EncodeToString(sum[:])}
}

// migrate asks for a live migration of one of the live VMs; a refusal (the API down, the VMI
// not running now) is counted, not fatal.
func (c *chaos) migrate() {
	name := c.live[c.rng.IntN(len(c.live))]
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"},
		Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: name}}
	if _, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(c.ns).Create(c.t.Context(), m, metav1.CreateOptions{}); err != nil {
		c.errors++
		return
	}
	c.migrations++
}

// importDataVolume starts the import of a DataVolume with the image's checksum.
func (c *chaos) importDataVolume() {
	name := fmt.Sprintf("dv-%d", len(c.imports)+1)
	manifest := manifestFile(c.t, dataVolumeManifest(name, c.image.url, c.image.checksum))
	if _, _, err := kubectlResult("-n", c.ns, "apply", "-f", manifest); err != nil {
		c.errors++
		return
	}
	c.imports = append(c.imports, name)
}

// workloadViolations checks the migrations and imports once faults stopped: every migration
// ended (Succeeded or Failed), every running VMI has one launcher Pod, every DataVolume
// imported Succeeded and holds exactly the image.
func (c *chaos) workloadViolations(running map[string]v1.VirtualMachineInstance) []string {
	var out []string
	migrations, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(c.ns).List(c.t.Context(), metav1.ListOptions{})
	if err != nil {
		return []string{"listing migrations: " + err.Error()}
	}
	for _, m := range migrations.Items {
		if p := m.Status.Phase; p != v1.MigrationSucceeded && p != v1.MigrationFailed {
			out = append(out, fmt.Sprintf("migration %s of %s still %q", m.Name, m.Spec.VMIName, p))
		}
	}
	for name, vmi := range running {
		pods, err := kube.CoreV1().Pods(c.ns).List(c.t.Context(), metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
		if err != nil {
			return append(out, "listing launcher Pods: "+err.Error())
		}
		if len(pods.Items) != 1 {
			out = append(out, fmt.Sprintf("VMI %s has %d launcher Pods, want 1 (a migration left one behind)", name, len(pods.Items)))
		}
	}
	for _, name := range c.imports {
		dv, err := vireo.CdiV1beta1().DataVolumes(c.ns).Get(c.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			out = append(out, fmt.Sprintf("DataVolume %s: %v", name, err))
			continue
		}
		if dv.Status.Phase != cdiv1beta1.Succeeded {
			out = append(out, fmt.Sprintf("DataVolume %s is %s", name, dv.Status.Phase))
			continue
		}
		if err := c.importedImage(name); err != nil {
			out = append(out, fmt.Sprintf("DataVolume %s reports Succeeded but %v", name, err))
		}
	}
	return out
}

// importedImage checks the disk.img of DataVolume name's claim (a hostPath volume): the image,
// then zeros to the claim's size.
func (c *chaos) importedImage(name string) error {
	pvc, err := kube.CoreV1().PersistentVolumeClaims(c.ns).Get(c.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pv, err := kube.CoreV1().PersistentVolumes().Get(c.t.Context(), pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil || pv.Spec.HostPath == nil {
		return fmt.Errorf("its volume %s is no hostPath volume (%v)", pvc.Spec.VolumeName, err)
	}
	f, err := os.Open(filepath.Join(pv.Spec.HostPath.Path, "disk.img"))
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(c.image.data))
	if _, err := io.ReadFull(f, head); err != nil {
		return fmt.Errorf("its disk.img is shorter than the image: %w", err)
	}
	if !bytes.Equal(head, c.image.data) {
		return fmt.Errorf("its disk.img differs from the image")
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	if i := bytes.IndexFunc(rest, func(r rune) bool { return r != 0 }); i >= 0 {
		return fmt.Errorf("its disk.img has data after the image, at byte %d", len(head)+i)
	}
	return nil
}
