package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestWebConsoleInABrowser drives the web console of `vireoctl ui` (the built vireoctl, which
// embeds make ui's console) in headless Chromium (web/test/e2e.mjs, playwright-core), as a user
// with edit (and kubevirt.io:migrate) in one namespace and as one with view: the lists show only what RBAC allows, Start
// makes the VM Running, the serial console answers (typed on a US and a German keyboard, pasted,
// copied from), two pages show one display and both follow it (the guest writing on its screen,
// the reboot the page's Ctrl-Alt-Del causes, virtual terminals switched with Ctrl+Alt+F2/F1),
// Soft reboot reboots the guest, Restart replaces the VMI and Migrate moves it, the console and
// displays reconnecting by themselves each time, a DataVolume's import progress is shown, and the pages' last canvases match the
// node's screenshot of the display.
func TestWebConsoleInABrowser(t *testing.T) {
	t.Parallel()
	chromium, node := "/usr/bin/chromium", "node"
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("%s: %v (make deps installs Debian's chromium)", chromium, err)
	}
	if _, err := os.Stat(filepath.Join(repo, "web", "node_modules", "playwright-core")); err != nil {
		t.Fatalf("playwright-core is not installed in web/node_modules (make ui installs it): %v", err)
	}
	ns, other := namespace(t), namespace(t)
	halted := func(name string) func(string) string {
		return func(m string) string {
			return strings.NewReplacer("runStrategy: Always", "runStrategy: Halted", "name: demo", "name: "+name).Replace(m)
		}
	}
	applyExample(t, ns, "vm-demo.yaml", halted("web"))
	applyExample(t, other, "vm-demo.yaml", halted("hidden"))
	bind(t, ns, "ui-editor", "edit")
	// Live migration is granted apart from edit, as KubeVirt's kubevirt.io:migrate is.
	bind(t, ns, "ui-editor", "kubevirt.io:migrate")
	bind(t, ns, "ui-viewer", "view")
	for _, user := range []string{"ui-editor", "ui-viewer"} {
		c := userClient(t, user)
		eventually(t, user+" lists the VMs of "+ns, func() error {
			_, err := c.KubevirtV1().VirtualMachines(ns).List(t.Context(), metav1.ListOptions{})
			return err
		})
	}
	// A VM the page creates as the edit user: its DataVolume imports at about 512 KiB/s.
	dvServer := serveImages(t, map[string][]byte{"tiny.qcow2.xz": xzCompress(t, tinyDisk(t, "disk.qcow2"))})
	var dvVM map[string]any
	if err := yaml.Unmarshal([]byte(vmWithDataVolume("dvweb", dvServer.base+"/slow/tiny.qcow2.xz")), &dvVM); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	editorURL := startUI(t, writeUserKubeconfig(t, dir, "ui-editor"))
	viewerURL := startUI(t, writeUserKubeconfig(t, dir, "ui-viewer"))

	config := map[string]any{
		"editorURL": editorURL, "viewerURL": viewerURL, "ns": ns, "otherNs": other,
		"vm": "web", "otherVM": "hidden", "dvVM": dvVM, "outDir": dir, "chromium": chromium,
	}
	configFile := filepath.Join(dir, "config.json")
	b, _ := json.Marshal(config)
	if err := os.WriteFile(configFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(repo, "web", "test", "e2e.mjs"))
	cmd.Env = append(os.Environ(), "VIREO_UI_TEST="+configFile)
	out, err := cmd.CombinedOutput()
	t.Logf("web/test/e2e.mjs:\n%s", out)
	var result struct {
		Steps     map[string]int `json:"steps"`
		LoadMs    int            `json:"loadMs"`
		Migration struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"migration"`
		Reconnects map[string]int `json:"reconnects"`
		Error      string         `json:"error"`
	}
	if b, rerr := os.ReadFile(filepath.Join(dir, "result.json")); rerr == nil {
		_ = json.Unmarshal(b, &result)
	}
	if err != nil {
		t.Fatalf("the browser test failed: %v: %s", err, result.Error)
	}
	t.Logf("page load %d ms; steps (ms): %v", result.LoadMs, result.Steps)

	// What the pages showed is what the API says: the VMI runs on the node the page showed it
	// migrate to, and the DataVolume was imported.
	vmi, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || vmi.Status.NodeName != result.Migration.To || result.Migration.From == result.Migration.To {
		t.Errorf("the page showed a migration %s -> %s; the VMI runs on %q (%v)", result.Migration.From, result.Migration.To, vmiNode(vmi), err)
	}
	waitDataVolume(t, ns, "dvweb-root", cdiv1beta1.Succeeded, time.Minute)
	t.Logf("sockets each page opened by itself after the migration: %v", result.Reconnects)

	// The display the pages show last is the node's: the screenshot (as the admin; the edit
	// role may not take screenshots) is compared pixel by pixel with each page's canvas.
	shot, err := vireo.KubevirtV1().RESTClient().Get().AbsPath(streamPath("subresources.kubevirt.io", ns, "web", "vnc/screenshot")).DoRaw(t.Context())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	want, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	// Kept for a look when the comparison fails: the pages' frames and the screenshot.
	keep := filepath.Join(repo, "_output", "webui-test")
	if err := os.MkdirAll(keep, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(keep, "screenshot.png"), shot, 0o644)
		for _, name := range []string{"vnc-a-1.png", "vnc-a-2.png", "vnc-a-3.png", "vnc-b-1.png", "vnc-b-2.png", "vnc-b-3.png", "result.json"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				_ = os.WriteFile(filepath.Join(keep, name), b, 0o644)
			}
		}
	}
	for _, page := range []string{"a", "b"} {
		frame := func(n int) image.Image { return readPNG(t, filepath.Join(dir, fmt.Sprintf("vnc-%s-%d.png", page, n))) }
		first, written, last := frame(1), frame(2), frame(3)
		differ, total := pixelDifference(want, last)
		t.Logf("page %s: %d of %d pixels differ from the node's screenshot", page, differ, total)
		// A blinking text cursor may differ; the guest's text may not.
		if total == 0 || differ > total/200 {
			t.Errorf("page %s's canvas is not the guest's display: %d of %d pixels differ from the screenshot", page, differ, total)
		}
		if d, _ := pixelDifference(first, written); d < 500 {
			t.Errorf("page %s: the guest's writing on its screen changed %d pixels of the canvas only", page, d)
		}
		if d, _ := pixelDifference(want, written); d < 500 {
			t.Errorf("page %s: the guest's first writing differs from its last (after the migration) in %d pixels only", page, d)
		}
	}
}

// writeUserKubeconfig writes a kubeconfig for user, authenticated by a client certificate of the
// installation's CA, into dir.
func writeUserKubeconfig(t *testing.T, dir, user string) string {
	t.Helper()
	cfg, err := cluster.UserConfig(user, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["vireo"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthority: cfg.CAFile, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile}
	kc.Contexts["vireo"] = &clientcmdapi.Context{Cluster: "vireo", AuthInfo: user}
	kc.CurrentContext = "vireo"
	path := filepath.Join(dir, user+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// startUI runs the built `vireoctl ui` with kubeconfig until the test ends and returns the URL
// it printed.
func startUI(t *testing.T, kubeconfig string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(cluster.Options().BinDir, "vireoctl"), "--kubeconfig", kubeconfig, "ui")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("vireoctl ui (%s):\n%s", filepath.Base(kubeconfig), stderr.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case line := <-lines:
		if !strings.HasPrefix(line, "http://127.0.0.1:") {
			t.Fatalf("vireoctl ui printed %q, not its URL\n%s", line, stderr.String())
		}
		return line
	case <-time.After(30 * time.Second):
		t.Fatalf("vireoctl ui printed no URL within 30 s\n%s", stderr.String())
	}
	return ""
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// pixelDifference counts the pixels of a and b that differ by more than a rounding in any
// channel (all of them when the sizes differ), and the pixels compared.
func pixelDifference(a, b image.Image) (differ, total int) {
	ab, bb := a.Bounds(), b.Bounds()
	if ab.Dx() != bb.Dx() || ab.Dy() != bb.Dy() {
		return ab.Dx() * ab.Dy(), ab.Dx() * ab.Dy()
	}
	for y := 0; y < ab.Dy(); y++ {
		for x := 0; x < ab.Dx(); x++ {
			r1, g1, b1, _ := a.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
			r2, g2, b2, _ := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			if far(r1, r2) || far(g1, g2) || far(b1, b2) {
				differ++
			}
		}
	}
	return differ, ab.Dx() * ab.Dy()
}

// far says whether two 16-bit colour channels differ by more than 8 of 255.
func far(a, b uint32) bool {
	d := int(a>>8) - int(b>>8)
	return d > 8 || d < -8
}

// vmiNode is the node a VMI runs on ("" for none).
func vmiNode(vmi *v1.VirtualMachineInstance) string {
	if vmi == nil {
		return ""
	}
	return vmi.Status.NodeName
}
