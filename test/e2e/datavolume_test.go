package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ulikunitz/xz"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// imageServer serves files over HTTP on the installation's bridge address (the project's own
// network, where the local registry also listens), for importer Pods to fetch.
type imageServer struct {
	base     string
	requests atomic.Int32
}

func serveImages(t *testing.T, files map[string][]byte) *imageServer {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(cluster.Options().Network.HostIP.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &imageServer{base: "http://" + l.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		name, slow := strings.CutPrefix(strings.TrimPrefix(r.URL.Path, "/"), "slow/")
		data, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if slow {
			w = &throttled{ResponseWriter: w}
		}
		http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(data))
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// throttled sends a response at about 512 KiB/s (64 KiB every 125 ms), so that an import
// lasts long enough to be watched.
type throttled struct{ http.ResponseWriter }

func (t *throttled) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n, err := t.ResponseWriter.Write(p[:min(len(p), 64<<10)])
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
		if f, ok := t.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		time.Sleep(125 * time.Millisecond) // rate limit, not synchronisation
	}
	return written, nil
}

// xzCompress is data compressed with xz.
func xzCompress(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func dataVolumeManifest(name, url, checksum string) string {
	m := fmt.Sprintf(`apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: %s
spec:
  source:
    http:
      url: %s
`, name, url)
	if checksum != "" {
		m += "      checksum: " + checksum + "\n"
	}
	return m + `  storage:
    resources:
      requests:
        storage: 64Mi
`
}

// waitDataVolume waits until the DataVolume is in phase and returns it.
func waitDataVolume(t *testing.T, ns, name string, phase cdiv1beta1.DataVolumePhase, timeout time.Duration) *cdiv1beta1.DataVolume {
	t.Helper()
	var dv *cdiv1beta1.DataVolume
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := vireo.CdiV1beta1().DataVolumes(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		dv = got
		return got.Status.Phase == phase, nil
	})
	if err != nil {
		t.Fatalf("DataVolume %s/%s never reached %s; status %+v", ns, name, phase, dv.Status)
	}
	return dv
}

// importerGone waits until the DataVolume's importer Pod is gone.
func importerGone(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "the importer Pod of "+name+" gone", func() error {
		_, err := kube.CoreV1().Pods(ns).Get(t.Context(), "importer-"+name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("importer Pod still there (%v)", err)
	})
}

// TestDataVolumeImportsOverHTTP: the test guest's qcow2, xz-compressed and verified by its
// checksum, is imported over HTTP into a new volume, which a VMI boots from; a source that
// answers 404 fails the DataVolume with a message naming it, and no importer is left running.
func TestDataVolumeImportsOverHTTP(t *testing.T) {
	ns := namespace(t)
	qcow2, err := os.ReadFile(filepath.Join(repo, "_output", "images", "tiny", "disk.qcow2"))
	if err != nil {
		t.Fatal(err)
	}
	compressed := xzCompress(t, qcow2)
	sum := sha256.Sum256(compressed)
	srv := serveImages(t, map[string][]byte{"tiny.qcow2.xz": compressed})

	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeManifest("tiny-dv", srv.base+"/tiny.qcow2.xz", "sha256:"+hex.EncodeToString(sum[:]))))
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeManifest("missing", srv.base+"/no-such-image.img", "")))

	dv := waitDataVolume(t, ns, "tiny-dv", cdiv1beta1.Succeeded, 3*time.Minute)
	if dv.Status.Progress != "100.0%" || dv.Status.ClaimName != "tiny-dv" {
		t.Errorf("status %+v", dv.Status)
	}
	if row := kubectl(t, "-n", ns, "get", "dv", "tiny-dv", "--no-headers"); !strings.Contains(row, "Succeeded") || !strings.Contains(row, "100.0%") {
		t.Errorf("kubectl get dv: %q", row)
	}
	importerGone(t, ns, "tiny-dv")

	failed := waitDataVolume(t, ns, "missing", cdiv1beta1.Failed, 3*time.Minute)
	var msg string
	for _, c := range failed.Status.Conditions {
		if c.Type == cdiv1beta1.DataVolumeRunning {
			msg = c.Message
		}
	}
	if !strings.Contains(msg, "404") || !strings.Contains(msg, "no-such-image.img") {
		t.Errorf("the failed DataVolume's Running condition says %q; want the 404 and the URL", msg)
	}
	importerGone(t, ns, "missing")

	applyExample(t, ns, "vmi-pvc.yaml", func(m string) string {
		vmi := strings.SplitN(m, "\n---\n", 2)[1]
		return strings.Replace(vmi, "persistentVolumeClaim:\n        claimName: tiny-disk", "dataVolume:\n        name: tiny-dv", 1)
	})
	openConsole(t, ns, "pvc").waitFor(t, guestMarker, 120*time.Second)
	waitPhase(t, ns, "pvc", v1.Running, 30*time.Second)

	// A VM whose disk is a dataVolumeTemplate: Provisioning while it imports (slowly enough to
	// watch its progress move), then Running from the imported disk.
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, vmWithDataVolume("dvvm", srv.base+"/slow/tiny.qcow2.xz")))
	progress := map[cdiv1beta1.DataVolumeProgress]bool{}
	sawProvisioning := false
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(ctx, "dvvm", metav1.GetOptions{}); err == nil {
			sawProvisioning = sawProvisioning || vm.Status.PrintableStatus == v1.VirtualMachineStatusProvisioning
		}
		dv, err := vireo.CdiV1beta1().DataVolumes(ns).Get(ctx, "dvvm-root", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if !metav1.IsControlledBy(dv, &metav1.ObjectMeta{UID: vmUID(t, ns, "dvvm")}) {
			return false, fmt.Errorf("DataVolume dvvm-root is not owned by its VM: %v", dv.OwnerReferences)
		}
		progress[dv.Status.Progress] = true
		return dv.Status.Phase == cdiv1beta1.Succeeded, nil
	})
	if err != nil {
		t.Fatalf("the VM's DataVolume did not succeed: %v", err)
	}
	if !sawProvisioning {
		t.Error("the VM never showed printableStatus Provisioning while its DataVolume imported")
	}
	intermediate := 0
	for p := range progress {
		if p != "N/A" && p != "100.0%" && p != "" {
			intermediate++
		}
	}
	if intermediate == 0 {
		t.Errorf("no progress between 0 and 100 %% was reported during a slow import: %v", progress)
	}
	waitVMRow(t, ns, "dvvm", "Running", "True")
	openConsole(t, ns, "dvvm").waitFor(t, guestMarker, 120*time.Second)
}

func vmUID(t *testing.T, ns, name string) types.UID {
	t.Helper()
	vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return vm.UID
}

func vmWithDataVolume(name, url string) string {
	return fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: %[1]s
spec:
  runStrategy: Always
  dataVolumeTemplates:
    - metadata:
        name: %[1]s-root
      spec:
        source:
          http:
            url: %[2]s
        storage:
          resources:
            requests:
              storage: 64Mi
  template:
    spec:
      terminationGracePeriodSeconds: 10
      domain:
        resources:
          requests:
            memory: 128Mi
        devices:
          disks:
            - name: rootdisk
              disk:
                bus: virtio
      volumes:
        - name: rootdisk
          dataVolume:
            name: %[1]s-root
`, name, url)
}
