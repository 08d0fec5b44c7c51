package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vireo-dev/vireo/importer/importerapi"
	"github.com/vireo-dev/vireo/importer/uploadapi"
)

// uploadRun is an ImportUpload running in the background, with a client for its socket.
type uploadRun struct {
	base   string // the URL the client's requests go to, before the path
	o      Options
	src    *UploadSource
	client *http.Client
	done   chan struct{}
	cancel context.CancelFunc // stops the import
	res    Result
	err    error
}

// socketClient is an HTTP client whose every connection goes to the unix socket sock.
func socketClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
}

// waitSocket waits until the unix socket sock accepts connections.
func waitSocket(t *testing.T, sock string) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		last = err
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the upload socket does not accept connections: %v", last)
	}
}

// startUpload runs ImportUpload of a fresh UploadSource into fresh directories and waits for
// its socket to accept connections.
func startUpload(t *testing.T) *uploadRun {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "upload.sock")
	u := &uploadRun{base: "http://upload", src: NewUploadSource(sock), done: make(chan struct{})}
	u.src.FailureGrace = 10 * time.Second
	u.o = options(t, u.src)
	u.client = socketClient(sock)
	t.Cleanup(u.client.CloseIdleConnections)
	ctx, cancel := context.WithCancel(testContext(t))
	u.cancel = cancel
	go func() {
		defer close(u.done)
		u.res, u.err = ImportUpload(ctx, u.o)
	}()
	waitSocket(t, sock)
	return u
}

// wait waits for ImportUpload to return.
func (u *uploadRun) wait(t *testing.T) (Result, error) {
	t.Helper()
	select {
	case <-u.done:
	case <-time.After(30 * time.Second):
		t.Fatal("ImportUpload did not return")
	}
	u.client.CloseIdleConnections()
	return u.res, u.err
}

// do sends a request to the upload socket and decodes the answer.
func (u *uploadRun) do(t *testing.T, method, query string, body io.Reader, header http.Header) (int, uploadapi.Status) {
	t.Helper()
	req, err := http.NewRequest(method, u.base+uploadapi.Path+query, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := u.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, query, err)
	}
	defer resp.Body.Close()
	var st uploadapi.Status
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("%s %s: %s: the answer %q is not an uploadapi.Status: %v", method, query, resp.Status, raw, err)
	}
	return resp.StatusCode, st
}

func (u *uploadRun) get(t *testing.T) (int, uploadapi.Status) {
	t.Helper()
	return u.do(t, http.MethodGet, "", nil, nil)
}

// put sends data as the chunk at offset; total >= 0 is sent in uploadapi.SizeHeader.
func (u *uploadRun) put(t *testing.T, offset int64, data []byte, final bool, total int64) (int, uploadapi.Status) {
	t.Helper()
	q := "?offset=" + strconv.FormatInt(offset, 10)
	if final {
		q += "&final=true"
	}
	h := http.Header{}
	if total >= 0 {
		h.Set(uploadapi.SizeHeader, strconv.FormatInt(total, 10))
	}
	return u.do(t, http.MethodPut, q, bytes.NewReader(data), h)
}

// upload sends data[from:] in chunks of size chunk, the last one final, expecting 200s.
func (u *uploadRun) upload(t *testing.T, data []byte, from, chunk int) {
	t.Helper()
	for off := from; ; off += chunk {
		end := min(off+chunk, len(data))
		final := end == len(data)
		code, st := u.put(t, int64(off), data[off:end], final, int64(len(data)))
		if code != http.StatusOK || st.Received != int64(end) || st.Done != final {
			t.Fatalf("PUT of the chunk [%d, %d): %d %+v", off, end, code, st)
		}
		if final {
			return
		}
	}
}

// checkGoroutines waits, boundedly, for the goroutines to be back to at most base.
func checkGoroutines(t *testing.T, base int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return runtime.NumGoroutine() <= base, nil
	})
	if err != nil {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines left, %d before the upload:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
	}
}

func TestUploadRaw(t *testing.T) {
	needQemuImg(t)
	raw := rawContent()
	base := runtime.NumGoroutine()
	u := startUpload(t)
	var mu sync.Mutex
	var progress [][2]int64
	u.src.Progress = func(received, total int64) {
		mu.Lock()
		progress = append(progress, [2]int64{received, total})
		mu.Unlock()
	}
	if code, st := u.get(t); code != http.StatusOK || st != (uploadapi.Status{}) {
		t.Fatalf("GET before the upload: %d %+v", code, st)
	}
	chunk := 3 << 20
	if code, st := u.put(t, 0, raw[:chunk], false, int64(len(raw))); code != http.StatusOK || st.Received != int64(chunk) || st.Done {
		t.Fatalf("PUT of the first chunk: %d %+v", code, st)
	}
	// A wrong offset, behind or ahead, answers 409 with the position.
	for _, off := range []int64{0, int64(chunk) + 1} {
		if code, st := u.put(t, off, raw[off:off+10], false, -1); code != http.StatusConflict || st.Received != int64(chunk) {
			t.Errorf("PUT at the wrong offset %d: %d %+v, want 409 with received %d", off, code, st, chunk)
		}
	}
	u.upload(t, raw, chunk, chunk)
	res, err := u.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatRaw || res.Received != int64(len(raw)) {
		t.Errorf("result %+v", res)
	}
	checkDisk(t, u.o, raw)
	if _, err := os.Lstat(u.src.Socket); !os.IsNotExist(err) {
		t.Errorf("the socket was not removed: %v", err)
	}
	mu.Lock()
	last := progress[len(progress)-1]
	mu.Unlock()
	if last != [2]int64{int64(len(raw)), int64(len(raw))} {
		t.Errorf("the last progress is %v, want all %d bytes", last, len(raw))
	}
	checkGoroutines(t, base)
}

func TestUploadQcow2XZ(t *testing.T) {
	data, err := os.ReadFile(fixture(t, "qcow2.xz"))
	if err != nil {
		t.Fatal(err)
	}
	u := startUpload(t)
	u.upload(t, data, 0, len(data)/5+1)
	res, err := u.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatQCOW2 || res.Compression != CompressionXZ || res.ImageSize != imageSize {
		t.Errorf("result %+v", res)
	}
	checkDisk(t, u.o, rawContent())
}

// TestUploadInterrupted cuts a chunk's body short: the position counts what arrived, and the
// upload resumes from there.
func TestUploadInterrupted(t *testing.T) {
	needQemuImg(t)
	raw := rawContent()
	base := runtime.NumGoroutine()
	u := startUpload(t)
	first, sent := 1<<20, 300000
	if code, st := u.put(t, 0, raw[:first], false, int64(len(raw))); code != http.StatusOK {
		t.Fatalf("PUT of the first chunk: %d %+v", code, st)
	}
	// A chunk of 2 MiB is announced; the connection closes after 300000 bytes of it.
	c, err := net.Dial("unix", u.src.Socket)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "PUT %s?offset=%d HTTP/1.1\r\nHost: upload\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", uploadapi.Path, first, 2<<20)
	if _, err := c.Write(raw[first : first+sent]); err != nil {
		t.Fatal(err)
	}
	c.Close()
	want := int64(first + sent)
	err = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		code, st := u.get(t)
		if code != http.StatusOK || st.Received > want {
			return false, fmt.Errorf("GET after the interrupted chunk: %d %+v, want received %d", code, st, want)
		}
		return st.Received == want, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The writer of the interrupted chunk may not have noticed the end yet: 409, same position.
	next := int(want) + 1<<20
	err = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		code, st := u.put(t, want, raw[want:next], false, int64(len(raw)))
		if code == http.StatusOK && st.Received == int64(next) {
			return true, nil
		}
		if code != http.StatusConflict || st.Received != want {
			return false, fmt.Errorf("PUT resuming at %d: %d %+v", want, code, st)
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	u.upload(t, raw, next, 3<<20)
	if _, err := u.wait(t); err != nil {
		t.Fatal(err)
	}
	checkDisk(t, u.o, raw)
	checkGoroutines(t, base)
}

// TestUploadTooLarge uploads more than the volume holds: the chunk being written when the
// import fails answers 422 with the message, and the importer stops.
func TestUploadTooLarge(t *testing.T) {
	for _, announce := range []bool{false, true} {
		t.Run(fmt.Sprintf("announced=%v", announce), func(t *testing.T) {
			big := make([]byte, 20<<20)
			copy(big[1<<20:], "data")
			base := runtime.NumGoroutine()
			u := startUpload(t)
			total := int64(-1)
			if announce {
				total = int64(len(big))
			}
			var code int
			var st uploadapi.Status
			for off := 0; off < len(big); off += 4 << 20 {
				if code, st = u.put(t, int64(off), big[off:off+4<<20], false, total); code != http.StatusOK {
					break
				}
			}
			if code != http.StatusUnprocessableEntity || !strings.Contains(st.Error, "larger than the volume") {
				t.Errorf("the upload ended with %d %+v, want 422 with the failure", code, st)
			}
			_, err := u.wait(t)
			if err == nil || IsTransient(err) || err.Error() != st.Error {
				t.Errorf("ImportUpload = %v, want the permanent failure %q", err, st.Error)
			}
			checkOnly(t, u.o.TargetDir)
			checkOnly(t, u.o.ScratchDir)
			checkGoroutines(t, base)
		})
	}
}

// TestUploadFailureGrace: nobody asks for the failure, the importer stops after the grace.
func TestUploadFailureGrace(t *testing.T) {
	u := startUpload(t)
	u.src.FailureGrace = 100 * time.Millisecond
	u.put(t, 0, []byte("PK\x03\x04 a zip archive is not a disk image"), true, -1)
	start := time.Now()
	if _, err := u.wait(t); err == nil || !strings.Contains(err.Error(), "zip") {
		t.Errorf("ImportUpload = %v, want the unsupported format", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ImportUpload returned %v after the upload, the grace is 100ms", d)
	}
}

// TestUploadProtocol checks the handler's answers, without an import behind it.
func TestUploadProtocol(t *testing.T) {
	src := NewUploadSource("unused")
	srv := httptest.NewServer(src)
	defer srv.Close()
	u := &uploadRun{base: srv.URL, src: src, client: srv.Client()}
	read := make(chan string, 1)
	var openTotal int64
	go func() {
		body, total, err := src.Open(testContext(t))
		if err != nil {
			read <- err.Error()
			return
		}
		openTotal = total
		b, err := io.ReadAll(body)
		read <- fmt.Sprintf("%s %v", b, err)
	}()
	for _, q := range []string{"", "?offset=x", "?offset=-1", "?offset=0&final=maybe"} {
		if code, st := u.do(t, http.MethodPut, q, strings.NewReader("x"), nil); code != http.StatusBadRequest || st.Error == "" {
			t.Errorf("PUT %q: %d %+v, want 400 saying why", q, code, st)
		}
	}
	if code, _ := u.do(t, http.MethodPost, "?offset=0", nil, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", code)
	}
	if code, st := u.put(t, 0, []byte("hello"), false, 10); code != http.StatusOK || st.Received != 5 {
		t.Fatalf("PUT: %d %+v", code, st)
	}
	if code, st := u.put(t, 5, []byte("w"), false, 11); code != http.StatusBadRequest || st.Received != 5 {
		t.Errorf("PUT announcing another size: %d %+v, want 400", code, st)
	}
	// A final chunk short of the announced size is not the end.
	if code, st := u.put(t, 5, []byte("wor"), true, -1); code != http.StatusConflict || st.Received != 8 || st.Done {
		t.Errorf("short final PUT: %d %+v, want 409 at 8", code, st)
	}
	// One writer at a time.
	pr, pw := io.Pipe()
	first := make(chan int)
	go func() {
		code, _ := u.do(t, http.MethodPut, "?offset=8", pr, nil)
		first <- code
	}()
	pw.Write([]byte("l"))
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, st := u.get(t)
		return st.Received == 9, nil
	}); err != nil {
		t.Fatal("the first writer's byte never arrived")
	}
	if code, st := u.put(t, 9, []byte("d"), true, -1); code != http.StatusConflict || st.Received != 9 || st.Done {
		t.Errorf("PUT while another is written: %d %+v, want 409 at 9", code, st)
	}
	pw.Close()
	if code := <-first; code != http.StatusOK {
		t.Errorf("the first writer got %d", code)
	}
	if code, st := u.put(t, 9, []byte("d"), true, 10); code != http.StatusOK || st.Received != 10 || !st.Done {
		t.Fatalf("final PUT: %d %+v", code, st)
	}
	if got := <-read; got != "helloworld <nil>" || openTotal != 10 {
		t.Errorf("the import read %q, size %d", got, openTotal)
	}
	if code, st := u.put(t, 10, nil, true, -1); code != http.StatusConflict || !st.Done {
		t.Errorf("PUT after the end: %d %+v, want 409", code, st)
	}
	src.finish(fmt.Errorf("boom"))
	if code, st := u.get(t); code != http.StatusUnprocessableEntity || st != (uploadapi.Status{Received: 10, Done: true, Error: "boom"}) {
		t.Errorf("GET after the failure: %d %+v", code, st)
	}
	select {
	case <-src.answered:
	case <-time.After(5 * time.Second):
		t.Error("the failure's answer was not recorded")
	}
}

func TestUploadSocketPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{file: "regular file", link: "symbolic link", dir: "directory"} {
		if l, err := listenUploadSocket(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("listenUploadSocket(%s) = %v, want an error naming %s", path, err, want)
			if l != nil {
				l.Close()
			}
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep" {
		t.Errorf("the file behind the link: %q, %v", b, err)
	}
	// A stale socket is replaced.
	sock := filepath.Join(dir, "upload.sock")
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	l, err := listenUploadSocket(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, err := os.Lstat(sock)
	if err != nil || st.Mode() != os.ModeSocket|0o660 {
		t.Errorf("the socket: %v, %v; want a socket with mode 0660", st.Mode(), err)
	}
}

func TestUploadCommand(t *testing.T) {
	c := NewCommandOptions()
	c.Source, c.Capacity = SourceKindUpload, "16Mi"
	if _, err := c.Options(); err == nil || !strings.Contains(err.Error(), "--upload-socket") {
		t.Errorf("--source=upload without a socket: %v", err)
	}
	target, scratch := dirs(t)
	c.TargetDir, c.ScratchDir, c.UploadSocket = target, scratch, filepath.Join(t.TempDir(), "upload.sock")
	u := &uploadRun{base: "http://upload", client: socketClient(c.UploadSocket), done: make(chan struct{})}
	defer u.client.CloseIdleConnections()
	go func() {
		defer close(u.done)
		u.err = c.Run(testContext(t))
	}()
	data := bytes.Repeat([]byte("vireo "), 100000)
	waitSocket(t, c.UploadSocket)
	u.upload(t, data, 0, 250000)
	if _, err := u.wait(t); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(target, importerapi.DiskName))
	if err != nil || !bytes.Equal(got[:len(data)], data) {
		t.Errorf("disk.img: %v", err)
	}
}

// TestUploadCanceled stops the import while it waits for the next chunk.
func TestUploadCanceled(t *testing.T) {
	base := runtime.NumGoroutine()
	u := startUpload(t)
	if code, st := u.put(t, 0, make([]byte, 1<<20), false, 4<<20); code != http.StatusOK {
		t.Fatalf("PUT: %d %+v", code, st)
	}
	u.cancel()
	if _, err := u.wait(t); !errors.Is(err, context.Canceled) || !IsTransient(err) {
		t.Errorf("ImportUpload = %v, want the cancellation", err)
	}
	checkOnly(t, u.o.TargetDir)
	checkGoroutines(t, base)
}
