package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// connectProxy is an HTTP CONNECT proxy on loopback, for a kubeconfig's proxy-url, to the
// one address allowed (kube-apiserver's): it passes what the client sends upstream at most at
// a given rate and, once, cuts the connection that carries the cutAt-th byte, as a flaky link
// would.
type connectProxy struct {
	allowed string
	l       net.Listener
	limiter *rate.Limiter
	cutAt   int64
	up      atomic.Int64 // bytes passed upstream
	cut     atomic.Bool
	conns   atomic.Int32 // CONNECTs served
	wg      sync.WaitGroup
}

func startConnectProxy(t *testing.T, allowed string, bytesPerSecond int, cutAt int64) *connectProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{allowed: allowed, l: l, limiter: rate.NewLimiter(rate.Limit(bytesPerSecond), 32<<10), cutAt: cutAt}
	go p.serve()
	t.Cleanup(func() {
		l.Close()
		p.wg.Wait()
	})
	return p
}

func (p *connectProxy) url() string { return "http://" + p.l.Addr().String() }

func (p *connectProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.tunnel(c)
		}()
	}
}

// tunnel answers one CONNECT to the allowed address and relays the connection.
func (p *connectProxy) tunnel(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		return
	}
	if req.Host != p.allowed {
		_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\n\r\n")
		return
	}
	up, err := net.Dial("tcp", req.Host)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer up.Close()
	p.conns.Add(1)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	go func() {
		_, _ = io.Copy(c, up)
		c.Close()
	}()
	buf := make([]byte, 16<<10)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			if p.limiter.WaitN(context.Background(), n) != nil {
				return
			}
			if p.up.Add(int64(n)) >= p.cutAt && p.cut.CompareAndSwap(false, true) {
				return // the link drops, mid-request
			}
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// apiServerAddress is kube-apiserver's host:port in the cluster's kubeconfig.
func apiServerAddress(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// proxiedKubeconfig is the cluster's kubeconfig with its clusters reached through proxyURL.
func proxiedKubeconfig(t *testing.T, proxyURL string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Options().Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.ProxyURL = proxyURL
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImageUpload uploads the test guest's qcow2 disk with vireoctl image-upload through
// kube-apiserver over a link slow enough that the upload takes longer than kube-apiserver's
// 60 s limit of a proxied request, and that drops once in the middle; the upload resumes and
// a VMI boots from the DataVolume; all in a namespace that enforces Pod Security baseline.
func TestImageUpload(t *testing.T) {
	t.Parallel()
	ns := baselineNamespace(t) // the upload Pod passes: its socket's directory is an emptyDir
	image := filepath.Join(repo, "_output", "images", "tiny", "disk.qcow2")
	st, err := os.Stat(image)
	if err != nil {
		t.Fatal(err)
	}
	// About 65 s of transfer for the whole file.
	bytesPerSecond := int(st.Size() / 65)
	proxy := startConnectProxy(t, apiServerAddress(t), bytesPerSecond, st.Size()/3)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, filepath.Join(cluster.Options().BinDir, "vireoctl"), "--kubeconfig", proxiedKubeconfig(t, proxy.url()),
		"-n", ns, "image-upload", "dv", "uploaded", "--image-path", image, "--size", "64Mi").CombinedOutput()
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("vireoctl image-upload: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "the DataVolume has succeeded") {
		t.Errorf("vireoctl image-upload said: %s", out)
	}
	if !proxy.cut.Load() || proxy.conns.Load() < 2 {
		t.Errorf("the link was cut: %v, CONNECTs %d: the upload should have resumed on a new connection", proxy.cut.Load(), proxy.conns.Load())
	}
	if elapsed < 60*time.Second {
		t.Errorf("the upload took %s: the test means to exceed kube-apiserver's 60 s request limit", elapsed)
	}
	t.Logf("uploaded %d bytes in %s through a %d B/s link cut once", st.Size(), elapsed.Round(time.Second), bytesPerSecond)
	dv := waitDataVolume(t, ns, "uploaded", cdiv1beta1.Succeeded, time.Minute)
	if dv.Annotations[v1.UploadNodeAnnotation] != "" {
		t.Errorf("the upload node annotation stayed after the upload: %v", dv.Annotations)
	}
	importerGone(t, ns, "uploaded")

	applyExample(t, ns, "vmi-pvc.yaml", func(m string) string {
		m = strings.SplitN(m, "\n---\n", 2)[1]
		m = strings.Replace(m, "metadata:\n  name: pvc", "metadata:\n  name: from-upload", 1)
		return strings.Replace(m, "persistentVolumeClaim:\n        claimName: tiny-disk", "dataVolume:\n        name: uploaded", 1)
	})
	openConsole(t, ns, "from-upload").waitFor(t, guestMarker, 120*time.Second)
}

// TestImageUploadRefusals: uploads into what takes none are refused with the reason, and a
// user who may edit DataVolumes but not upload is refused.
func TestImageUploadRefusals(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeWith("blank", "    blank: {}\n", "16Mi")))
	waitDataVolume(t, ns, "blank", cdiv1beta1.Succeeded, 2*time.Minute)
	image := filepath.Join(repo, "_output", "images", "tiny", "disk.qcow2")
	vireoctl := filepath.Join(cluster.Options().BinDir, "vireoctl")
	out, err := exec.CommandContext(t.Context(), vireoctl, "--kubeconfig", cluster.Options().Kubeconfig(),
		"-n", ns, "image-upload", "dv", "blank", "--image-path", image, "--no-create").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "its source is blank, not upload") {
		t.Errorf("uploading into a blank DataVolume: %v\n%s", err, out)
	}
	raw, err := vireo.CdiV1beta1().RESTClient().Get().AbsPath("/apis/cdi.kubevirt.io/v1beta1/namespaces", ns, "datavolumes", "blank", "upload").DoRaw(t.Context())
	if err == nil || !strings.Contains(string(raw), "has no upload source") {
		t.Errorf("GET the upload subresource of a blank DataVolume: %v %s", err, raw)
	}

	// An upload waiting for its image: an editor reaches its importer through the relays (the
	// position is 0); a viewer may not read it, let alone send a chunk.
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, dataVolumeWith("waiting", "    upload: {}\n", "16Mi")))
	bind(t, ns, "uploader", "kubevirt.io:edit")
	bind(t, ns, "looker", "kubevirt.io:view")
	path := "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ns + "/datavolumes/waiting/upload"
	editor, viewer := userClient(t, "uploader").CdiV1beta1().RESTClient(), userClient(t, "looker").CdiV1beta1().RESTClient()
	eventuallyWithin(t, "the editor reads the upload's position", 2*time.Minute, func() error {
		raw, err := editor.Get().AbsPath(path).DoRaw(t.Context())
		if err != nil {
			return fmt.Errorf("%v: %s", err, raw)
		}
		if !strings.Contains(string(raw), `"received":0`) {
			return fmt.Errorf("answer %s", raw)
		}
		return nil
	})
	if _, err := viewer.Get().AbsPath(path).DoRaw(t.Context()); !apierrors.IsForbidden(err) {
		t.Errorf("a viewer read the upload position: %v", err)
	}
	if _, err := viewer.Put().AbsPath(path).Param("offset", "0").Body([]byte("x")).DoRaw(t.Context()); !apierrors.IsForbidden(err) {
		t.Errorf("a viewer sent a chunk: %v", err)
	}
	dv, err := vireo.CdiV1beta1().DataVolumes(ns).Get(t.Context(), "waiting", metav1.GetOptions{})
	if err != nil || dv.Status.Phase != cdiv1beta1.UploadReady {
		t.Errorf("the DataVolume waiting for an upload: %v %+v", err, dv.Status)
	}
}
