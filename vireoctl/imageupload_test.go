package vireoctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/importer/uploadclient"
)

const dvPath = "/apis/cdi.kubevirt.io/v1beta1/namespaces/ns/datavolumes"

// fakeCluster serves the upload protocol at the DataVolume demo's upload subresource, and the
// DataVolume itself, with faults to inject.
type fakeCluster struct {
	t *testing.T
	*httptest.Server

	mu   sync.Mutex
	data []byte
	done bool
	puts []string // "offset+length" of each PUT, "!" appended to the final one
	// dropAt: the PUT whose chunk spans this offset takes the bytes up to it, then drops the
	// connection (once); -1 for none.
	dropAt int64
	// conflictAt: the PUT at this offset answers 409, the server having kept only conflictTo
	// bytes (once); -1 for none.
	conflictAt, conflictTo int64
	// failAt: the PUT at this offset answers 422; -1 for none.
	failAt int64
	// unavailable answers every upload request 503.
	unavailable bool

	dv         *cdiv1beta1.DataVolume
	dvGets     int
	failImport bool // the DataVolume ends Failed instead of Succeeded
}

func newFakeCluster(t *testing.T) *fakeCluster {
	f := &fakeCluster{t: t, dropAt: -1, conflictAt: -1, failAt: -1}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeCluster) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == dvPath+"/demo/upload" && r.Method == http.MethodGet:
		f.reply(w, http.StatusOK, "")
	case r.URL.Path == dvPath+"/demo/upload" && r.Method == http.MethodPut:
		f.put(w, r)
	case r.URL.Path == dvPath && r.Method == http.MethodPost:
		dv := &cdiv1beta1.DataVolume{}
		if err := json.NewDecoder(r.Body).Decode(dv); err != nil {
			f.t.Errorf("POST of a DataVolume: %v", err)
		}
		if f.dv != nil {
			kubeStatus(w, http.StatusConflict, "AlreadyExists", "datavolumes.cdi.kubevirt.io \"demo\" already exists")
			return
		}
		f.dv = dv
		f.writeDV(w, http.StatusCreated)
	case r.URL.Path == dvPath+"/demo" && r.Method == http.MethodGet:
		if f.dv == nil {
			kubeStatus(w, http.StatusNotFound, "NotFound", "datavolumes.cdi.kubevirt.io \"demo\" not found")
			return
		}
		f.dvGets++
		switch {
		case f.done && f.failImport:
			f.dv.Status.Phase = cdiv1beta1.Failed
			f.dv.Status.Conditions = []cdiv1beta1.DataVolumeCondition{{Type: cdiv1beta1.DataVolumeRunning, Status: "False", Message: "corrupt qcow2"}}
		case f.done:
			f.dv.Status.Phase = cdiv1beta1.Succeeded
		case f.dvGets == 1:
			f.dv.Status.Phase = cdiv1beta1.UploadScheduled
		default:
			f.dv.Status.Phase = cdiv1beta1.UploadReady
		}
		f.writeDV(w, http.StatusOK)
	default:
		f.t.Errorf("unexpected %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

func (f *fakeCluster) writeDV(w http.ResponseWriter, code int) {
	f.dv.APIVersion, f.dv.Kind = "cdi.kubevirt.io/v1beta1", "DataVolume"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(f.dv)
}

func kubeStatus(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"message":%q,"code":%d}`, reason, message, code)
}

// reply answers the upload protocol's JSON; the caller holds f.mu.
func (f *fakeCluster) reply(w http.ResponseWriter, code int, msg string) {
	if f.unavailable {
		kubeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "the importer is not reachable")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(uploadapi.Status{Received: int64(len(f.data)), Done: f.done, Error: msg})
}

// put takes a chunk; the caller holds f.mu.
func (f *fakeCluster) put(w http.ResponseWriter, r *http.Request) {
	off, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	final := r.URL.Query().Get("final") == "true"
	entry := fmt.Sprintf("%d+%d", off, r.ContentLength)
	if final {
		entry += "!"
	}
	f.puts = append(f.puts, entry)
	if err != nil || r.Header.Get("Content-Type") != "application/octet-stream" || r.Header.Get(uploadapi.SizeHeader) == "" || r.ContentLength < 0 {
		f.t.Errorf("PUT %s: offset %v, Content-Type %q, %s %q, Content-Length %d", r.URL, err, r.Header.Get("Content-Type"),
			uploadapi.SizeHeader, r.Header.Get(uploadapi.SizeHeader), r.ContentLength)
	}
	switch {
	case f.unavailable:
		io.Copy(io.Discard, r.Body)
		f.reply(w, 0, "")
	case off == f.failAt:
		io.Copy(io.Discard, r.Body)
		f.reply(w, http.StatusUnprocessableEntity, "the image is larger than the volume")
	case f.done || off != int64(len(f.data)):
		io.Copy(io.Discard, r.Body)
		f.reply(w, http.StatusConflict, "")
	case off == f.conflictAt:
		f.conflictAt = -1
		io.Copy(io.Discard, r.Body)
		f.data = f.data[:f.conflictTo]
		f.reply(w, http.StatusConflict, "")
	case f.dropAt >= off && f.dropAt < off+r.ContentLength:
		part := make([]byte, f.dropAt-off)
		if _, err := io.ReadFull(r.Body, part); err != nil {
			f.t.Error(err)
		}
		f.data = append(f.data, part...)
		f.dropAt = -1
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Error(err)
			return
		}
		conn.Close()
	default:
		b, err := io.ReadAll(r.Body)
		if err != nil {
			f.t.Error(err)
		}
		f.data = append(f.data, b...)
		f.done = final
		f.reply(w, http.StatusOK, "")
	}
}

// uploader speaks the upload protocol to the DataVolume demo of the fake cluster, as
// image-upload does.
func (f *fakeCluster) uploader(t *testing.T) *uploadclient.HTTP {
	client, err := (&target{cfg: &rest.Config{Host: f.URL}, namespace: "ns"}).rest()
	if err != nil {
		t.Fatal(err)
	}
	return &uploadclient.HTTP{Client: client.Client, URL: client.Get().AbsPath(uploadPath("ns", "demo")).URL().String()}
}

// fastTransfer retries at once.
func fastTransfer(chunk int64) uploadclient.Options {
	return uploadclient.Options{ChunkSize: chunk, Retries: 3, Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}
}

func randomImage(n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(int64(n))).Read(b)
	return b
}

func TestTransfer(t *testing.T) {
	image := randomImage(1<<20 + 123)
	for _, c := range []struct {
		name  string
		setup func(f *fakeCluster)
		puts  string
	}{
		{"clean", func(*fakeCluster) {}, "0+262144 262144+262144 524288+262144 786432+262144 1048576+123!"},
		{"dropped mid-chunk", func(f *fakeCluster) { f.dropAt = 300000 },
			"0+262144 262144+262144 300000+262144 562144+262144 824288+224411!"},
		{"409 at another position", func(f *fakeCluster) { f.conflictAt, f.conflictTo = 524288, 100000 },
			"0+262144 262144+262144 524288+262144 100000+262144 362144+262144 624288+262144 886432+162267!"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeCluster(t)
			c.setup(f)
			var last int64
			err := uploadclient.Transfer(context.Background(), f.uploader(t), bytes.NewReader(image), int64(len(image)), fastTransfer(256<<10), func(n int64) { last = n })
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.data, image) || !f.done {
				t.Errorf("the server holds %d bytes (done %v), want the image's %d", len(f.data), f.done, len(image))
			}
			if got := strings.Join(f.puts, " "); got != c.puts {
				t.Errorf("PUTs %s\nwant %s", got, c.puts)
			}
			if last != int64(len(image)) {
				t.Errorf("the progress ended at %d", last)
			}
		})
	}
}

func TestTransferFailures(t *testing.T) {
	image := randomImage(100000)
	f := newFakeCluster(t)
	f.failAt = 65536
	err := uploadclient.Transfer(context.Background(), f.uploader(t), bytes.NewReader(image), int64(len(image)), fastTransfer(64<<10), nil)
	if !errors.Is(err, uploadclient.ErrFailed) || !strings.Contains(err.Error(), "the image is larger than the volume") {
		t.Errorf("transfer = %v, want the server's failure", err)
	}
	if len(f.puts) != 2 {
		t.Errorf("PUTs after the failure: %v", f.puts)
	}

	f = newFakeCluster(t)
	f.unavailable = true
	err = uploadclient.Transfer(context.Background(), f.uploader(t), bytes.NewReader(image), int64(len(image)), fastTransfer(64<<10), nil)
	if err == nil || !strings.Contains(err.Error(), "the importer is not reachable") || !strings.Contains(err.Error(), "4 failed attempts") {
		t.Errorf("transfer = %v, want giving up after 4 attempts", err)
	}

	// An empty image is one empty final chunk; an image uploaded already is not sent again.
	f = newFakeCluster(t)
	for i := 0; i < 2; i++ {
		if err := uploadclient.Transfer(context.Background(), f.uploader(t), bytes.NewReader(nil), 0, fastTransfer(64<<10), nil); err != nil || !f.done {
			t.Fatalf("empty image: %v, done %v", err, f.done)
		}
	}
	if strings.Join(f.puts, " ") != "0+0!" {
		t.Errorf("PUTs of an empty image: %v", f.puts)
	}
	if err := uploadclient.Transfer(context.Background(), f.uploader(t), bytes.NewReader(image), int64(len(image)), fastTransfer(64<<10), nil); err == nil {
		t.Error("a different image was taken as uploaded")
	}
}

// runImageUpload runs image-upload against the fake cluster.
func runImageUpload(t *testing.T, f *fakeCluster, args ...string) (string, string, error) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	flags := genericclioptions.NewConfigFlags(true)
	o := &imageUploadOptions{chunkSize: "8Mi", waitSecs: 5, poll: time.Millisecond, processing: 5 * time.Second, transfer: fastTransfer(0)}
	cmd := imageUploadCommand(flags, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, o)
	flags.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs(append(args, "--kubeconfig="+kubeconfig, "--server="+f.URL, "--namespace=ns"))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestImageUploadCommand(t *testing.T) {
	image := randomImage(3<<20 + 5)
	path := filepath.Join(t.TempDir(), "disk.qcow2")
	if err := os.WriteFile(path, image, 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeCluster(t)
	f.dropAt = 1 << 20
	out, errOut, err := runImageUpload(t, f, "dv", "demo", "--image-path", path, "--size", "2Gi",
		"--storage-class", "fast", "--access-mode", "ReadWriteMany", "--chunk-size", "1Mi")
	t.Logf("stderr:\n%s", errOut)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.data, image) {
		t.Errorf("the server holds %d bytes, want the image's %d", len(f.data), len(image))
	}
	spec := f.dv.Spec
	if spec.Source == nil || spec.Source.Upload == nil || spec.Storage == nil || spec.Storage.Resources.Requests.Storage().String() != "2Gi" ||
		spec.Storage.StorageClassName == nil || *spec.Storage.StorageClassName != "fast" ||
		len(spec.Storage.AccessModes) != 1 || spec.Storage.AccessModes[0] != cdiv1beta1.ReadWriteMany {
		t.Errorf("the DataVolume created: %+v", spec)
	}
	if !strings.Contains(out, "Uploaded "+path+" (3.0 MiB) into DataVolume ns/demo") {
		t.Errorf("summary %q", out)
	}
	for _, want := range []string{"DataVolume ns/demo created", "phase UploadScheduled", "Uploading: 3.0 MiB of 3.0 MiB (100.0%)", "waiting for DataVolume ns/demo to be populated"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q", want)
		}
	}

	// Once more: the DataVolume exists, and with --no-create it has already succeeded.
	if _, _, err := runImageUpload(t, f, "dv", "demo", "--image-path", path, "--size", "2Gi"); err == nil || !strings.Contains(err.Error(), "already exists: add --no-create") {
		t.Errorf("creating it again: %v", err)
	}
	if _, _, err := runImageUpload(t, f, "dv", "demo", "--image-path", path, "--no-create"); err == nil || !strings.Contains(err.Error(), "already Succeeded") {
		t.Errorf("uploading into a succeeded DataVolume: %v", err)
	}
}

func TestImageUploadCommandFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(path, randomImage(1000), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeCluster(t)
	f.failImport = true
	if _, _, err := runImageUpload(t, f, "dv", "demo", "--image-path", path, "--size", "1Gi"); err == nil || !strings.Contains(err.Error(), "is Failed: corrupt qcow2") {
		t.Errorf("a failed import: %v", err)
	}

	f = newFakeCluster(t)
	if _, _, err := runImageUpload(t, f, "dv", "demo", "--image-path", path, "--no-create"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("--no-create without the DataVolume: %v", err)
	}
	f.dv = &cdiv1beta1.DataVolume{Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://x/"}}}}
	if _, _, err := runImageUpload(t, f, "dv", "demo", "--image-path", path, "--no-create"); err == nil || !strings.Contains(err.Error(), "its source is http, not upload") {
		t.Errorf("--no-create into an http DataVolume: %v", err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dv", "demo", "--size", "1Gi"}, "--image-path is required"},
		{[]string{"dv", "demo", "--image-path", path}, "--size is required"},
		{[]string{"dv", "demo", "--image-path", path, "--size=-1"}, "not a positive quantity"},
		{[]string{"dv", "demo", "--image-path", path, "--no-create", "--size", "1Gi"}, "leave them out with --no-create"},
		{[]string{"dv", "demo", "--image-path", path, "--size", "1Gi", "--access-mode", "RWX"}, "--access-mode \"RWX\" is not one of"},
		{[]string{"dv", "demo", "--image-path", path, "--size", "1Gi", "--chunk-size", "0"}, "--chunk-size"},
		{[]string{"dv", "demo", "--image-path", filepath.Dir(path), "--size", "1Gi"}, "not a regular file"},
		{[]string{"pvc", "demo", "--image-path", path, "--size", "1Gi"}, "PersistentVolumeClaim is not supported"},
		{[]string{"demo", "--image-path", path, "--size", "1Gi"}, "takes dv NAME"},
	} {
		f := newFakeCluster(t)
		if _, _, err := runImageUpload(t, f, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

func TestUploadProgress(t *testing.T) {
	var buf bytes.Buffer
	p := newUploadProgress(&buf, true, 100<<20)
	for i := int64(0); i <= 100; i += 10 {
		p.update(i << 20)
	}
	p.finish()
	if out := buf.String(); !strings.Contains(out, "Uploading") || !strings.Contains(out, "100%") || !strings.Contains(out, "100 MiB") || !strings.HasSuffix(out, "\n") {
		t.Errorf("terminal output %q: want a bar that reaches 100%% of 100 MiB and ends its line", out)
	}

	buf.Reset()
	now := time.Unix(1000, 0)
	lines := newUploadProgress(&buf, false, 100<<20).(*progressLines)
	lines.now = func() time.Time { return now }
	for i := 0; i <= 12; i++ {
		lines.update(int64(i) << 20)
		now = now.Add(time.Second)
	}
	lines.finish()
	want := "Uploading: 5.0 MiB of 100.0 MiB (5.0%)\nUploading: 10.0 MiB of 100.0 MiB (10.0%)\nUploading: 12.0 MiB of 100.0 MiB (12.0%)\n"
	if buf.String() != want {
		t.Errorf("log output %q, want a line every 5s and the last %q", buf.String(), want)
	}
	if formatBytes(1023) != "1023 B" || formatBytes(3<<30+(1<<29)) != "3.5 GiB" {
		t.Errorf("formatBytes: %s, %s", formatBytes(1023), formatBytes(3<<30+(1<<29)))
	}
}
