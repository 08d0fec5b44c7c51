package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

const streamSubprotocol = "plain.kubevirt.io"

// streamPath is a VMI subresource's path in group kubevirt.io or subresources.kubevirt.io.
func streamPath(group, ns, name, kind string) string {
	return fmt.Sprintf("/apis/%s/v1/namespaces/%s/virtualmachineinstances/%s/%s", group, ns, name, kind)
}

// dialStream opens a websocket through kube-apiserver as cfg's user, the way KubeVirt's
// clients do (subprotocol plain.kubevirt.io unless protocols say otherwise).
func dialStream(t *testing.T, cfg *rest.Config, path string, protocols ...string) (*wsStream, *http.Response, error) {
	t.Helper()
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if protocols == nil {
		protocols = []string{streamSubprotocol}
	}
	d := websocket.Dialer{TLSClientConfig: tlsCfg, Subprotocols: protocols, HandshakeTimeout: 30 * time.Second}
	header := http.Header{}
	if cfg.BearerToken != "" {
		header.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	ws, resp, err := d.Dial("wss"+strings.TrimPrefix(cfg.Host, "https")+path, header)
	if err != nil && resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		err = fmt.Errorf("%w: HTTP %d: %s", err, resp.StatusCode, body)
	}
	if err != nil {
		return nil, resp, err
	}
	s := &wsStream{ws: ws, done: make(chan struct{})}
	t.Cleanup(func() { ws.Close() })
	go s.read()
	return s, resp, nil
}

// wsStream keeps what a console or VNC websocket received, and why it ended.
type wsStream struct {
	ws   *websocket.Conn
	mu   sync.Mutex
	out  strings.Builder
	end  error
	done chan struct{}
}

func (s *wsStream) read() {
	defer close(s.done)
	for {
		typ, data, err := s.ws.ReadMessage()
		s.mu.Lock()
		if err != nil {
			s.end = err
			s.mu.Unlock()
			return
		}
		if typ == websocket.BinaryMessage {
			s.out.Write(data)
		}
		s.mu.Unlock()
	}
}

func (s *wsStream) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func (s *wsStream) send(t *testing.T, line string) {
	t.Helper()
	if err := s.ws.WriteMessage(websocket.BinaryMessage, []byte(line+"\n")); err != nil {
		t.Fatalf("sending %q: %v", line, err)
	}
}

// waitFor waits until the stream printed want.
func (s *wsStream) waitFor(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return strings.Contains(s.output(), want), nil
	}); err != nil {
		t.Fatalf("the stream never printed %q within %s; it printed:\n%s (ended: %v)", want, timeout, s.output(), s.ended())
	}
}

func (s *wsStream) ended() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// closeText waits for the session's end and returns the server's close message.
func (s *wsStream) closeText(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(timeout):
		t.Fatalf("the session did not end within %s", timeout)
	}
	var ce *websocket.CloseError
	if !errors.As(s.ended(), &ce) {
		t.Fatalf("the session ended without a close message: %v", s.ended())
	}
	return ce.Text
}

// answer42 is the shell's answer on a line of its own (boot messages may hold "42" elsewhere).
var answer42 = regexp.MustCompile(`(?m)^42\r?$`)

// echo42 types echo $((6*7)) until the guest's shell answers 42 (it may still be booting). Each
// attempt starts with Ctrl-C: a line the booting guest read only in part (an unclosed "$((")
// would keep the shell at its continuation prompt for every attempt after it.
func echo42(t *testing.T, s *wsStream) {
	t.Helper()
	if err := echo42Within(t, s, 120*time.Second); err != nil {
		t.Fatal(err)
	}
}

// echo42Within is echo42 for callers that go on: it returns why the guest did not answer.
func echo42Within(t *testing.T, s *wsStream, timeout time.Duration) error {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 3*time.Second, timeout, true, func(context.Context) (bool, error) {
		s.send(t, "\x03")
		s.send(t, "echo $((6*7))")
		return answer42.MatchString(s.output()), nil
	})
	if err != nil {
		return fmt.Errorf("the guest never answered 42; the console printed:\n%s (ended: %v)", s.output(), s.ended())
	}
	return nil
}

// refusal dials and expects an HTTP error with code whose body contains want.
func refusal(t *testing.T, cfg *rest.Config, path string, code int, want string, protocols ...string) {
	t.Helper()
	_, resp, err := dialStream(t, cfg, path, protocols...)
	if err == nil {
		t.Fatalf("%s was opened; want %d", path, code)
	}
	if resp == nil {
		t.Fatalf("%s: %v; want HTTP %d", path, err, code)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code || !strings.Contains(string(body), want) {
		t.Errorf("%s: HTTP %d %s; want %d with %q", path, resp.StatusCode, body, code, want)
	}
}

// nodeAgentFDs counts the open descriptors of the node agent on node (a host process here).
func nodeAgentFDs(t *testing.T, node string) int {
	t.Helper()
	pods, err := kube.CoreV1().Pods("vireo-system").List(t.Context(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=vireo-nodeagent", FieldSelector: "spec.nodeName=" + node})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("node agent Pods on %s: %v", node, err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", containerProcess(t, &pods.Items[0], nodeAgentContainer)))
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// TestConsoleThroughAggregation: the serial console and VNC through kube-apiserver at both
// groups' paths, session takeover, clear refusals, and the session's end when the VMI goes.
func TestConsoleThroughAggregation(t *testing.T) {
	ns := namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml")
	vmi := waitPhase(t, ns, "tiny", v1.Running, 120*time.Second)
	fds0 := nodeAgentFDs(t, vmi.Status.NodeName)

	first, _, err := dialStream(t, admin, streamPath("kubevirt.io", ns, "tiny", "console"))
	if err != nil {
		t.Fatalf("console at kubevirt.io: %v", err)
	}
	if first.ws.Subprotocol() != streamSubprotocol {
		t.Errorf("subprotocol %q", first.ws.Subprotocol())
	}
	echo42(t, first)

	second, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "tiny", "console"))
	if err != nil {
		t.Fatalf("console at subresources.kubevirt.io: %v", err)
	}
	if got := first.closeText(t, 30*time.Second); !strings.Contains(got, "taken over") {
		t.Errorf("the first session's close message %q does not say it was taken over", got)
	}
	echo42(t, second)

	vnc, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "tiny", "vnc"))
	if err != nil {
		t.Fatalf("vnc: %v", err)
	}
	vnc.waitFor(t, "RFB 003.008\n", 30*time.Second)
	refusal(t, admin, streamPath("kubevirt.io", ns, "tiny", "vnc")+"?preserveSession=true", http.StatusServiceUnavailable, "preserveSession")

	// Bad input: clear errors.
	refusal(t, admin, streamPath("kubevirt.io", ns, "nope", "console"), http.StatusNotFound, "nope")
	refusal(t, admin, streamPath("subresources.kubevirt.io", ns, "nope", "console"), http.StatusNotFound, "nope")
	refusal(t, admin, streamPath("kubevirt.io", ns, "tiny", "console"), http.StatusBadRequest, streamSubprotocol, "other.protocol")
	for _, group := range []string{"kubevirt.io", "subresources.kubevirt.io"} {
		res := vireo.KubevirtV1().RESTClient().Get().AbsPath(streamPath(group, ns, "tiny", "console")).Do(t.Context())
		var code int
		res.StatusCode(&code)
		if err := res.Error(); code != http.StatusBadRequest || err == nil || !strings.Contains(err.Error(), "websocket") {
			t.Errorf("plain GET at %s: HTTP %d, %v", group, code, err)
		}
	}

	// vireoctl console from a pipe takes the console over, gets the answer and exits at EOF.
	if out := vireoctlPipe(t, "echo $((6*7))\n", "-n", ns, "console", "tiny", "--drain=5s"); !answer42.MatchString(out) {
		t.Errorf("vireoctl console printed %q, no 42", out)
	}
	if got := second.closeText(t, 30*time.Second); !strings.Contains(got, "taken over") {
		t.Errorf("the second session's close message %q does not say it was taken over", got)
	}
	third, _, err := dialStream(t, admin, streamPath("kubevirt.io", ns, "tiny", "console"))
	if err != nil {
		t.Fatalf("console again: %v", err)
	}

	// The VMI goes: the open sessions end saying so, and the node agent holds nothing more.
	kubectl(t, "-n", ns, "delete", "vmi", "tiny", "--wait=false")
	if got := third.closeText(t, 60*time.Second); !strings.Contains(got, "VMI stopped") {
		t.Errorf("the console's close message %q does not say the VMI stopped", got)
	}
	if got := vnc.closeText(t, 60*time.Second); !strings.Contains(got, "VMI stopped") {
		t.Errorf("the VNC session's close message %q does not say the VMI stopped", got)
	}
	eventually(t, "the node agent's descriptors back to where they were", func() error {
		if n := nodeAgentFDs(t, vmi.Status.NodeName); n > fds0 {
			return fmt.Errorf("%d open descriptors, %d before the sessions", n, fds0)
		}
		return nil
	})
}

// TestConsoleRBACAndPhases: view may not open a console or VNC, edit may; a VMI that does not
// run yet answers 400.
func TestConsoleRBACAndPhases(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml", func(m string) string {
		return strings.Replace(m, "metadata:\n  name: tiny", "metadata:\n  name: nowhere", 1)
	}, func(m string) string {
		return strings.Replace(m, "spec:\n", "spec:\n  nodeSelector:\n    vireo.example/no-such-node: \"true\"\n", 1)
	})
	applyExample(t, ns, "vmi-tiny.yaml")
	refusal(t, admin, streamPath("kubevirt.io", ns, "nowhere", "console"), http.StatusBadRequest, "not running")
	waitPhase(t, ns, "tiny", v1.Running, 120*time.Second)

	bind(t, ns, "viewer", "view")
	bind(t, ns, "editor", "edit")
	viewer, err := cluster.UserConfig("viewer", nil)
	if err != nil {
		t.Fatal(err)
	}
	editor, err := cluster.UserConfig("editor", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range []string{"kubevirt.io", "subresources.kubevirt.io"} {
		for _, kind := range []string{"console", "vnc"} {
			refusal(t, viewer, streamPath(group, ns, "tiny", kind), http.StatusForbidden, "forbidden")
		}
	}
	for _, group := range []string{"kubevirt.io", "subresources.kubevirt.io"} {
		for user, cfg := range map[string]*rest.Config{"viewer": viewer, "editor": editor} {
			code := plainGet(t, cfg, streamPath(group, ns, "tiny", "vnc/screenshot"))
			if code != http.StatusForbidden {
				t.Errorf("%s's screenshot at %s: HTTP %d, want 403 (admin only)", user, group, code)
			}
		}
	}
	var edited *wsStream
	eventually(t, "edit opens the console", func() error {
		s, resp, err := dialStream(t, editor, streamPath("subresources.kubevirt.io", ns, "tiny", "console"))
		if err != nil {
			return fmt.Errorf("%v (%v)", err, resp)
		}
		edited = s
		return nil
	})
	// While open, the session holds a seat of Vireo's own priority level at kube-apiserver, not
	// one of global-default's (artifacts/base/flowcontrol.yaml).
	if n := executingRequests(t, "vireo-streams"); n < 1 {
		t.Errorf("priority level vireo-streams executes %d requests with a console open", n)
	}
	edited.ws.Close()
	eventually(t, "edit opens VNC", func() error {
		s, resp, err := dialStream(t, editor, streamPath("kubevirt.io", ns, "tiny", "vnc"))
		if err != nil {
			return fmt.Errorf("%v (%v)", err, resp)
		}
		defer s.ws.Close()
		s.waitFor(t, "RFB 003.008\n", 30*time.Second)
		return nil
	})
}

// vireoctlPipe runs vireoctl as the admin with input on a pipe and returns its output.
func vireoctlPipe(t *testing.T, input string, args ...string) string {
	t.Helper()
	out, err := vireoctlPipeErr(input, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// vireoctlPipeErr is vireoctlPipe for callers that retry: it returns the failure.
func vireoctlPipeErr(input string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(cluster.Options().BinDir, "vireoctl"), append([]string{"--kubeconfig", cluster.Options().Kubeconfig()}, args...)...)
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("vireoctl %s: %v\n%s\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// TestConsoleIdleOutlivesRequestTimeout: an idle console stays open longer than
// kube-apiserver's request timeout (60 s), and still answers afterwards.
func TestConsoleIdleOutlivesRequestTimeout(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml")
	waitPhase(t, ns, "tiny", v1.Running, 120*time.Second)
	s, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "tiny", "console"))
	if err != nil {
		t.Fatal(err)
	}
	echo42(t, s)
	select {
	case <-s.done:
		t.Fatalf("the idle console ended: %v", s.ended())
	case <-time.After(75 * time.Second):
	}
	s.mu.Lock()
	s.out.Reset()
	s.mu.Unlock()
	echo42(t, s)
}

// TestVireoctlVNC: a VNC client through vireoctl vnc --proxy-only's local port completes the
// RFB handshake with the guest's display through kube-apiserver and receives a framebuffer update.
func TestVireoctlVNC(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml")
	waitPhase(t, ns, "tiny", v1.Running, 120*time.Second)
	// Booted (the shell answers), so the display keeps its text mode from here on.
	con, _, err := dialStream(t, admin, streamPath("kubevirt.io", ns, "tiny", "console"))
	if err != nil {
		t.Fatal(err)
	}
	echo42(t, con)
	cmd := exec.CommandContext(t.Context(), filepath.Join(cluster.Options().BinDir, "vireoctl"), "--kubeconfig", cluster.Options().Kubeconfig(),
		"-n", ns, "vnc", "tiny", "--proxy-only", "--port=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("vireoctl vnc printed no address: %v\n%s", err, stderr.String())
	}
	fields := strings.Fields(line)
	addr := fields[len(fields)-1]
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	w, h, rects, err := rfbFirstUpdate(conn)
	if err != nil {
		t.Fatalf("RFB through vireoctl vnc: %v\n%s", err, stderr.String())
	}
	if w == 0 || h == 0 || rects == 0 {
		t.Errorf("display %dx%d, first update with %d rectangles", w, h, rects)
	}
	t.Logf("display %dx%d, first update: %d rectangles", w, h, rects)

	// The screenshot, at both groups' paths: a PNG of the display's size that is not one colour.
	for _, group := range []string{"kubevirt.io", "subresources.kubevirt.io"} {
		body, err := vireo.KubevirtV1().RESTClient().Get().AbsPath(streamPath(group, ns, "tiny", "vnc/screenshot")).Param("moveCursor", "true").DoRaw(t.Context())
		if err != nil {
			t.Fatalf("screenshot at %s: %v", group, err)
		}
		img, err := png.Decode(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("screenshot at %s is not a PNG (%d bytes): %v", group, len(body), err)
		}
		if b := img.Bounds(); b.Dx() != int(w) || b.Dy() != int(h) {
			t.Errorf("screenshot at %s: %v, display %dx%d", group, b, w, h)
		}
		colours := map[color.RGBA]bool{}
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
				colours[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)] = true
			}
		}
		if len(colours) < 2 {
			t.Errorf("screenshot at %s is one colour", group)
		}
	}
	// And as a user takes it: vireoctl vnc screenshot -f.
	file := filepath.Join(t.TempDir(), "tiny.png")
	shot := exec.CommandContext(t.Context(), filepath.Join(cluster.Options().BinDir, "vireoctl"), "--kubeconfig", cluster.Options().Kubeconfig(),
		"-n", ns, "vnc", "screenshot", "tiny", "-f", file)
	if out, err := shot.CombinedOutput(); err != nil {
		t.Fatalf("vireoctl vnc screenshot: %v\n%s", err, out)
	}
	if f, err := os.Open(file); err != nil {
		t.Error(err)
	} else {
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Errorf("vireoctl's screenshot is not a PNG: %v", err)
		} else if b := img.Bounds(); b.Dx() != int(w) || b.Dy() != int(h) {
			t.Errorf("vireoctl's screenshot: %v, display %dx%d", b, w, h)
		}
	}
}

// rfbFirstUpdate speaks RFB 3.8 as a client (no authentication, shared) and asks for the whole
// screen; it returns the display's size and the rectangle count of the first update.
func rfbFirstUpdate(c net.Conn) (w, h uint16, rects uint16, err error) {
	version := make([]byte, 12)
	if _, err = io.ReadFull(c, version); err != nil {
		return
	}
	if string(version) != "RFB 003.008\n" {
		return 0, 0, 0, fmt.Errorf("server version %q", version)
	}
	if _, err = c.Write(version); err != nil {
		return
	}
	var n [1]byte
	if _, err = io.ReadFull(c, n[:]); err != nil {
		return
	}
	types := make([]byte, n[0])
	if _, err = io.ReadFull(c, types); err != nil {
		return
	}
	if !bytes.Contains(types, []byte{1}) {
		return 0, 0, 0, fmt.Errorf("security types %v offer no None", types)
	}
	if _, err = c.Write([]byte{1}); err != nil {
		return
	}
	var result [4]byte
	if _, err = io.ReadFull(c, result[:]); err != nil {
		return
	}
	if binary.BigEndian.Uint32(result[:]) != 0 {
		return 0, 0, 0, fmt.Errorf("security result %v", result)
	}
	if _, err = c.Write([]byte{1}); err != nil { // ClientInit: shared
		return
	}
	init := make([]byte, 24)
	if _, err = io.ReadFull(c, init); err != nil {
		return
	}
	w, h = binary.BigEndian.Uint16(init[0:2]), binary.BigEndian.Uint16(init[2:4])
	if _, err = io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(init[20:24]))); err != nil {
		return
	}
	req := []byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(req[6:8], w)
	binary.BigEndian.PutUint16(req[8:10], h)
	if _, err = c.Write(req); err != nil {
		return
	}
	var hdr [4]byte
	if _, err = io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	if hdr[0] != 0 {
		return w, h, 0, fmt.Errorf("first server message type %d, want a framebuffer update (0)", hdr[0])
	}
	return w, h, binary.BigEndian.Uint16(hdr[2:4]), nil
}

// plainGet sends a GET as cfg's user and returns the HTTP status.
func plainGet(t *testing.T, cfg *rest.Config, path string) int {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(strings.TrimSuffix(cfg.Host, "/") + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// executingRequests reads how many requests kube-apiserver's priority level executes now.
func executingRequests(t *testing.T, level string) int {
	t.Helper()
	body, err := kube.CoreV1().RESTClient().Get().AbsPath("/debug/api_priority_and_fairness/dump_priority_levels").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("reading kube-apiserver's priority levels: %v", err)
	}
	lines := strings.Split(string(body), "\n")
	col := -1
	for i, h := range strings.Split(lines[0], ",") {
		if strings.TrimSpace(h) == "ExecutingRequests" {
			col = i
		}
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if col >= 0 && len(f) > col && strings.TrimSpace(f[0]) == level {
			n, err := strconv.Atoi(strings.TrimSpace(f[col]))
			if err != nil {
				t.Fatalf("priority level line %q: %v", l, err)
			}
			return n
		}
	}
	t.Fatalf("no priority level %s (column ExecutingRequests) in:\n%s", level, body)
	return 0
}
