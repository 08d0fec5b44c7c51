package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
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
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster/pki"
)

// imageServer serves files over HTTP on the installation's bridge address (the project's own
// network, where the local registry also listens), for importer Pods to fetch.
type imageServer struct {
	base     string
	requests atomic.Int32
}

func serveImages(t *testing.T, files map[string][]byte) *imageServer {
	return serveImagesTLS(t, files, nil)
}

// serveImagesTLS serves over https with cert when it is set.
func serveImagesTLS(t *testing.T, files map[string][]byte, cert *tls.Certificate) *imageServer {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(cluster.Options().Network.HostIP.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &imageServer{base: "http://" + l.Addr().String()}
	if cert != nil {
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
		s.base = "https://" + l.Addr().String()
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		name, slow := strings.CutPrefix(strings.TrimPrefix(r.URL.Path, "/"), "slow/")
		name, drop := strings.CutPrefix(name, "drop/")
		data, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if drop {
			dropHalfway(w, data)
			return
		}
		if slow {
			w = newThrottled(w, r)
		}
		http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(data))
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// dropHalfway promises all of data, ignoring any Range, sends half and drops the connection:
// a server that loses every connection, whose file never arrives whole.
func dropHalfway(w http.ResponseWriter, data []byte) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: application/octet-stream\r\n\r\n", len(data))
	_, _ = buf.Write(data[:len(data)/2])
	_ = buf.Flush()
}

// throttled sends a response at about 512 KiB/s (a rate limiter, 64 KiB at a time), so that
// an import lasts long enough to be watched.
type throttled struct {
	http.ResponseWriter
	ctx     context.Context
	limiter *rate.Limiter
}

func newThrottled(w http.ResponseWriter, r *http.Request) *throttled {
	return &throttled{ResponseWriter: w, ctx: r.Context(), limiter: rate.NewLimiter(512<<10, 64<<10)}
}

func (t *throttled) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), 64<<10)]
		if err := t.limiter.WaitN(t.ctx, len(chunk)); err != nil {
			return written, err
		}
		n, err := t.ResponseWriter.Write(chunk)
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
		if f, ok := t.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
	return written, nil
}

// tinyDisk is a file of the test guest's images (disk.qcow2, disk.raw).
func tinyDisk(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "_output", "images", "tiny", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// gzipCompress is data compressed with gzip.
func gzipCompress(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// imagesCertificate is a CA (PEM) and a serving certificate it signed for the bridge address.
func imagesCertificate(t *testing.T) ([]byte, *tls.Certificate) {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(t.TempDir(), "ca", "e2e images CA")
	if err != nil {
		t.Fatal(err)
	}
	issued, err := ca.ServingCert("images", []string{"images.e2e.invalid"}, []net.IP{cluster.Options().Network.HostIP})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(issued.CertFile, issued.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return ca.PEM(), &pair
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
	source := "    http:\n      url: " + url + "\n"
	if checksum != "" {
		source += "      checksum: " + checksum + "\n"
	}
	return dataVolumeWith(name, source, "64Mi")
}

// dataVolumeWith is a DataVolume of the given source lines (indented under spec.source) and size.
func dataVolumeWith(name, source, size string) string {
	return fmt.Sprintf(`apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: %s
spec:
  source:
%s  storage:
    resources:
      requests:
        storage: %s
`, name, source, size)
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

// TestDataVolumeImports: the test guest is imported into new volumes as a qcow2, xz-compressed
// and verified by its checksum, over HTTP; as a gzip-compressed raw disk over HTTPS from a server
// whose CA a ConfigMap holds; and from the local registry's containerDisk; and the first is
// cloned. A VMI boots from the clone and the other two. Then a VM with a dataVolumeTemplate goes
// Provisioning -> Running.
func TestDataVolumeImports(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	qcow2, raw := tinyDisk(t, "disk.qcow2"), tinyDisk(t, "disk.raw")
	compressed := xzCompress(t, qcow2)
	sum := sha256.Sum256(compressed)
	srv := serveImages(t, map[string][]byte{"tiny.qcow2.xz": compressed})
	caPEM, cert := imagesCertificate(t)
	secure := serveImagesTLS(t, map[string][]byte{"tiny.raw.gz": gzipCompress(t, raw)}, cert)
	kubectl(t, "-n", ns, "create", "configmap", "images-ca", "--from-literal=ca.crt="+string(caPEM))

	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeManifest("tiny-dv", srv.base+"/tiny.qcow2.xz", "sha256:"+hex.EncodeToString(sum[:]))))
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeWith("tiny-https",
		"    http:\n      url: "+secure.base+"/tiny.raw.gz\n      certConfigMap: images-ca\n", "64Mi")))
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeWith("tiny-registry",
		"    registry:\n      url: docker://"+cluster.ContainerDiskImage("tiny")+"\n", "64Mi")))
	// A clone of tiny-dv, asked for before tiny-dv is populated (it waits), sized like it.
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: tiny-clone
spec:
  source:
    pvc:
      name: tiny-dv
  storage: {}
`))

	dv := waitDataVolume(t, ns, "tiny-dv", cdiv1beta1.Succeeded, 3*time.Minute)
	if dv.Status.Progress != "100.0%" || dv.Status.ClaimName != "tiny-dv" {
		t.Errorf("status %+v", dv.Status)
	}
	if row := kubectl(t, "-n", ns, "get", "dv", "tiny-dv", "--no-headers"); !strings.Contains(row, "Succeeded") || !strings.Contains(row, "100.0%") {
		t.Errorf("kubectl get dv: %q", row)
	}
	for _, name := range []string{"tiny-dv", "tiny-https", "tiny-registry", "tiny-clone"} {
		waitDataVolume(t, ns, name, cdiv1beta1.Succeeded, 3*time.Minute)
		importerGone(t, ns, name)
	}

	// tiny-dv's content is proven by its clone's guest booting.
	vmis := map[string]string{"clone": "tiny-clone", "https": "tiny-https", "registry": "tiny-registry"}
	for vmi, volume := range vmis {
		applyExample(t, ns, "vmi-pvc.yaml", func(m string) string {
			m = strings.SplitN(m, "\n---\n", 2)[1]
			m = strings.Replace(m, "metadata:\n  name: pvc", "metadata:\n  name: "+vmi, 1)
			return strings.Replace(m, "persistentVolumeClaim:\n        claimName: tiny-disk", "dataVolume:\n        name: "+volume, 1)
		})
	}
	// QEMU drops serial output while nothing is connected: every console opens before any wait.
	consoles := map[string]*console{}
	for vmi := range vmis {
		consoles[vmi] = openConsole(t, ns, vmi)
	}
	for _, c := range consoles {
		c.waitFor(t, guestMarker, 120*time.Second)
	}
	kubectl(t, "-n", ns, "delete", "vmi", "--all", "--wait=false")

	// A VM whose disk is a dataVolumeTemplate: Provisioning while it imports (slowly enough to
	// watch its progress move), then Running from the imported disk.
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, vmWithDataVolume("dvvm", srv.base+"/slow/tiny.qcow2.xz")))
	progress := map[cdiv1beta1.DataVolumeProgress]bool{}
	sawProvisioning := false
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
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

// TestDataVolumeBadSources: each bad source fails its DataVolume with a Running condition that
// names the cause, and leaves no importer Pod behind: a 404, a checksum mismatch, an image larger
// than its volume, an unsupported format (a tar archive) and a corrupt qcow2.
func TestDataVolumeBadSources(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	qcow2, raw := tinyDisk(t, "disk.qcow2"), tinyDisk(t, "disk.raw")
	corrupt := bytes.Clone(qcow2)
	for i := 64 << 10; i < len(corrupt); i++ {
		corrupt[i] = byte(i * 7)
	}
	archive := make([]byte, 10240)
	copy(archive, "disk.img")
	copy(archive[257:], "ustar\x0000")
	// 64 MiB of zeros in 64 KiB: more than a 16Mi volume holds once decompressed.
	bomb := gzipCompress(t, make([]byte, 64<<20))
	srv := serveImages(t, map[string][]byte{"tiny.qcow2": qcow2, "tiny.raw": raw, "corrupt.qcow2": corrupt, "disk.tar": archive, "bomb.raw.gz": bomb})
	zeros := "sha256:" + strings.Repeat("0", 64)
	cases := map[string]struct {
		source, size string
		says         []string
	}{
		"missing":     {"    http:\n      url: " + srv.base + "/no-such-image.img\n", "64Mi", []string{"404", "no-such-image.img"}},
		"badsum":      {"    http:\n      url: " + srv.base + "/tiny.qcow2\n      checksum: " + zeros + "\n", "64Mi", []string{"checksum mismatch"}},
		"toobig":      {"    http:\n      url: " + srv.base + "/tiny.raw\n", "4Mi", []string{"larger than the volume"}},
		"unsupported": {"    http:\n      url: " + srv.base + "/disk.tar\n", "64Mi", []string{"unsupported format", "tar"}},
		"corrupt":     {"    http:\n      url: " + srv.base + "/corrupt.qcow2\n", "64Mi", []string{"qemu-img"}},
		"bomb":        {"    http:\n      url: " + srv.base + "/bomb.raw.gz\n", "16Mi", []string{"larger than the volume"}},
	}
	for name, c := range cases {
		kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeWith(name, c.source, c.size)))
	}
	// A server that drops every connection halfway: a transient failure, retried by
	// restarting the importer, the cause in the Running condition; never Succeeded.
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeWith("drops", "    http:\n      url: "+srv.base+"/drop/tiny.raw\n", "64Mi")))
	eventuallyWithin(t, "the importer of a dropping server restarts with the cause", 3*time.Minute, func() error {
		dv, err := vireo.CdiV1beta1().DataVolumes(ns).Get(t.Context(), "drops", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if dv.Status.Phase == cdiv1beta1.Succeeded || dv.Status.Phase == cdiv1beta1.Failed {
			return fmt.Errorf("a DataVolume whose server drops every connection ended %s", dv.Status.Phase)
		}
		for _, cond := range dv.Status.Conditions {
			if cond.Type == cdiv1beta1.DataVolumeRunning && dv.Status.RestartCount >= 1 && strings.Contains(cond.Message, "truncated: got") {
				return nil
			}
		}
		return fmt.Errorf("phase %s, restarts %d, conditions %+v", dv.Status.Phase, dv.Status.RestartCount, dv.Status.Conditions)
	})
	kubectl(t, "-n", ns, "delete", "dv", "drops", "--wait=false")
	for name, c := range cases {
		dv := waitDataVolume(t, ns, name, cdiv1beta1.Failed, 3*time.Minute)
		var msg string
		for _, cond := range dv.Status.Conditions {
			if cond.Type == cdiv1beta1.DataVolumeRunning {
				msg = cond.Message
			}
		}
		for _, want := range c.says {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the Running condition says %q; want %q in it", name, msg, want)
			}
		}
		if row := kubectl(t, "-n", ns, "get", "dv", name, "--no-headers"); !strings.Contains(row, "Failed") {
			t.Errorf("kubectl get dv %s: %q", name, row)
		}
	}
	eventually(t, "no importer Pod left", func() error {
		pods, err := kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=containerized-data-importer"})
		if err != nil || len(pods.Items) > 0 {
			return fmt.Errorf("%d importer Pods (%v)", len(pods.Items), err)
		}
		return nil
	})
}
