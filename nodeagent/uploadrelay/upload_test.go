package uploadrelay

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs/nodedirstest"
)

// uploadPodFor is a running upload Pod controlled by DataVolume ns/dv (UID dvUID).
func uploadPodFor(ns, dv string, dvUID, podUID types.UID) *corev1.Pod {
	yes := true
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "importer-" + dv, UID: podUID,
		Labels:          map[string]string{v1.AppLabel: v1.UploadApp},
		OwnerReferences: []metav1.OwnerReference{{Kind: "DataVolume", Name: dv, UID: dvUID, Controller: &yes}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

func TestUploadRelay(t *testing.T) {
	dirs := nodedirstest.New(t)
	podUID := types.UID("up1")
	dir := nodedirstest.EmptyDir(t, dirs, podUID)
	podIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = podIdx.Add(uploadPodFor("ns", "up", "dv-uid", podUID))
	pending := uploadPodFor("ns", "pending", "p-uid", "up2")
	pending.Status.Phase = corev1.PodPending
	_ = podIdx.Add(pending)
	a := New(corelisters.NewPodLister(podIdx), dirs)

	// The importer's side: records what reaches the socket.
	var got *http.Request
	var body string
	l, err := net.Listen("unix", filepath.Join(dir, uploadapi.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	importerSide := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, body = r, string(b)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"received":5}`)
	})}
	go func() { _ = importerSide.Serve(l) }()
	t.Cleanup(func() { importerSide.Close() })
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/namespaces/ns/datavolumes/up/upload?uid=dv-uid&offset=0&final=true&other=x", strings.NewReader("hello"))
	req.Header.Set(uploadapi.SizeHeader, "5")
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(answer) != `{"received":5}` {
		t.Fatalf("relayed PUT: %s %q", resp.Status, answer)
	}
	if got.URL.Path != uploadapi.Path || got.URL.RawQuery != "final=true&offset=0" || body != "hello" {
		t.Errorf("the importer got %s?%s with %q; want %s?final=true&offset=0 with the chunk", got.URL.Path, got.URL.RawQuery, body, uploadapi.Path)
	}
	if got.Header.Get(uploadapi.SizeHeader) != "5" || got.Header.Get("Authorization") != "" {
		t.Errorf("the importer got headers %v: want the size and no credentials", got.Header)
	}

	for _, tc := range []struct{ path, want string }{
		{"/v1/namespaces/ns/datavolumes/up/upload?uid=other-uid", "no upload Pod of DataVolume ns/up"},
		{"/v1/namespaces/other/datavolumes/up/upload", "no upload Pod of DataVolume other/up"},
		{"/v1/namespaces/ns/datavolumes/nothing/upload", "no upload Pod of DataVolume ns/nothing"},
		{"/v1/namespaces/ns/datavolumes/pending/upload", "is not running (phase Pending)"},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(msg), tc.want) {
			t.Errorf("GET %s: %s %q, want 503 with %q", tc.path, resp.Status, msg, tc.want)
		}
	}
}
