package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

const (
	// chaosMaxImports bounds the DataVolumes a chaos run imports.
	chaosMaxImports = 3
	// chaosMaxUploads bounds the DataVolumes a chaos run uploads.
	chaosMaxUploads = 2
)

// chaosImage is what the chaos run's imports fetch and its uploads send: the test guest's raw
// disk (at path), with its checksum.
type chaosImage struct {
	data                []byte
	path, url, checksum string
}

// serveChaosImage serves the test guest's raw disk to the chaos run's imports.
func (c *chaos) serveChaosImage() {
	data := tinyDisk(c.t, "disk.raw")
	sum := sha256.Sum256(data)
	srv := serveImages(c.t, map[string][]byte{"disk.raw": data})
	c.image = &chaosImage{data: data, path: filepath.Join(repo, "_output", "images", "tiny", "disk.raw"),
		url: srv.base + "/disk.raw", checksum: "sha256:" + hex.EncodeToString(sum[:])}
}

// chaosUpload is one upload of a chaos run: vireoctl image-upload into a new DataVolume, run
// again with --no-create (as its error tells a user to) until one attempt succeeds or the run
// is over. Its fields are the uploader's until done is closed.
type chaosUpload struct {
	name     string
	done     chan struct{}
	attempts int
	out      string // the last attempt's output
	err      error  // the last attempt's error: nil once one succeeded
}

// upload starts uploading the image into a new DataVolume, in the background until ctx ends.
func (c *chaos) upload(ctx context.Context) {
	u := &chaosUpload{name: fmt.Sprintf("up-%d", len(c.uploads)+1), done: make(chan struct{})}
	c.uploads = append(c.uploads, u)
	go u.run(ctx, c.ns, c.image.path)
}

func (u *chaosUpload) run(ctx context.Context, ns, path string) {
	defer close(u.done)
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		args := []string{"--kubeconfig", cluster.Options().Kubeconfig(), "-n", ns,
			"image-upload", "dv", u.name, "--image-path", path, "--size", "64Mi"}
		if _, err := vireo.CdiV1beta1().DataVolumes(ns).Get(ctx, u.name, metav1.GetOptions{}); err == nil {
			args = append(args, "--no-create")
		}
		u.attempts++
		out, err := exec.CommandContext(ctx, filepath.Join(cluster.Options().BinDir, "vireoctl"), args...).CombinedOutput()
		u.out, u.err = string(out), err
		return err == nil, nil
	})
}

// uploadViolations: every upload ended with an attempt that succeeded.
func (c *chaos) uploadViolations() []string {
	var out []string
	for _, u := range c.uploads {
		select {
		case <-u.done:
			if u.err != nil {
				out = append(out, fmt.Sprintf("the upload into DataVolume %s failed %d times, last: %v: %s", u.name, u.attempts, u.err, strings.TrimSpace(u.out)))
			}
		default:
			out = append(out, fmt.Sprintf("the upload into DataVolume %s is still running", u.name))
		}
	}
	return out
}

// uploadsEnded waits for the uploads' goroutines (their context ended).
func (c *chaos) uploadsEnded() {
	for _, u := range c.uploads {
		<-u.done
	}
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

// workloadViolations checks the migrations, imports and uploads once faults stopped: every
// migration ended (Succeeded or Failed), every running VMI has one launcher Pod, every upload
// ended with success, every DataVolume imported or uploaded is Succeeded and holds exactly
// the image.
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
			out = append(out, fmt.Sprintf("VMI %s has %d launcher Pods, want 1 (a migration left one behind): %s; its migration state %s",
				name, len(pods.Items), describePods(pods.Items), describeMigrationState(vmi.Status.MigrationState)))
		}
	}
	out = append(out, c.uploadViolations()...)
	dataVolumes := slices.Clone(c.imports)
	for _, u := range c.uploads {
		dataVolumes = append(dataVolumes, u.name)
	}
	for _, name := range dataVolumes {
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

// importedImage checks the disk.img of DataVolume name's claim (imported or uploaded) (a hostPath volume): the image,
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

// describePods names each Pod with what tells a leftover from the VMI's own: its phase, node,
// the migration that made it and whether it is being deleted.
func describePods(pods []corev1.Pod) string {
	var parts []string
	for _, p := range pods {
		desc := fmt.Sprintf("%s (%s on %q, migration %q", p.Name, p.Status.Phase, p.Spec.NodeName, p.Labels[v1.MigrationJobLabel])
		if p.DeletionTimestamp != nil {
			desc += ", deleted at " + p.DeletionTimestamp.UTC().Format(time.RFC3339)
		}
		parts = append(parts, desc+")")
	}
	return strings.Join(parts, ", ")
}

// describeMigrationState is the VMI's migration state in one line.
func describeMigrationState(s *v1.VirtualMachineInstanceMigrationState) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("migration %s, source %s, target %s, completed %t, failed %t (%s)",
		s.MigrationUID, s.SourcePod, s.TargetPod, s.Completed, s.Failed, s.FailureReason)
}
