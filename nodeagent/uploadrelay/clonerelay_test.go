package uploadrelay

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
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
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

const (
	cloneDVUID = "c10e0000-0000-4000-8000-000000000001"
	// Short UIDs: the sockets' paths below a temporary directory must fit sun_path.
	cloneSourceUID = types.UID("src")
	cloneTargetUID = types.UID("dst")
)

// cloneSourcePod is a running source Pod in namespace ns of the clone into DataVolume dst/copy.
func cloneSourcePod(ns string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uploadapi.CloneSourcePodName(cloneDVUID), UID: cloneSourceUID,
		Labels:      map[string]string{v1.AppLabel: v1.CloneSourceApp, uploadapi.CloneTargetUIDLabel: cloneDVUID},
		Annotations: map[string]string{uploadapi.CloneTargetAnnotation: "dst/copy"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// cloneTargetPod is the running upload Pod of DataVolume dst/copy, cloning from namespace from.
func cloneTargetPod(from string) *corev1.Pod {
	pod := uploadPodFor("dst", "copy", cloneDVUID, cloneTargetUID)
	pod.Annotations = map[string]string{uploadapi.CloneSourceNamespaceAnnotation: from}
	return pod
}

func TestCloneTargetPairsOnlyWhatTheControllerMade(t *testing.T) {
	forgedName := cloneSourcePod("golden")
	forgedName.Name = "my-pod"
	noTarget := cloneSourcePod("golden")
	noTarget.Annotations = nil
	for _, c := range []struct {
		name    string
		source  *corev1.Pod
		target  *corev1.Pod
		wantErr string
	}{
		{"paired", cloneSourcePod("golden"), cloneTargetPod("golden"), ""},
		{"a source Pod another namespace made", cloneSourcePod("mallory"), cloneTargetPod("golden"), `clones from namespace "golden", not from mallory`},
		{"a target that names no source", cloneSourcePod("golden"), cloneTargetPod(""), `clones from namespace ""`},
		{"a source not named for the DataVolume", forgedName, cloneTargetPod("golden"), "is not a clone's source Pod"},
		{"a source naming no DataVolume", noTarget, cloneTargetPod("golden"), "names no target DataVolume"},
		{"no target on this node", cloneSourcePod("golden"), nil, "no upload Pod of DataVolume dst/copy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			if c.target != nil {
				_ = idx.Add(c.target)
			}
			got, err := cloneTarget(corelisters.NewPodLister(idx), c.source)
			switch {
			case c.wantErr == "" && (err != nil || got.UID != cloneTargetUID):
				t.Errorf("cloneTarget = %v, %v; want the target Pod", got, err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("cloneTarget error %v, want one saying %q", err, c.wantErr)
			}
		})
	}
}

// TestCloneRelay: the agent listens in the source Pod's emptyDir and each connection reaches
// the target upload Pod's socket in its emptyDir; once the source Pod ends, nothing listens.
func TestCloneRelay(t *testing.T) {
	pods, err := os.MkdirTemp("", "cr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(pods) })
	emptyDir := func(uid types.UID) string {
		dir := filepath.Join(pods, protocol.EmptyDirPath(string(uid), launcherpodapi.RunDirVolumeName))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	sourceDir, targetDir := emptyDir(cloneSourceUID), emptyDir(cloneTargetUID)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	source := cloneSourcePod("golden")
	_ = idx.Add(source)
	_ = idx.Add(cloneTargetPod("golden"))
	var l net.Listener
	a := New(corelisters.NewPodLister(idx), nodedirs.Dirs{Root: t.TempDir(), Pods: pods})

	l, err = net.Listen("unix", filepath.Join(targetDir, uploadapi.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, "target got "+r.Method+" "+string(b))
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })

	a.SyncCloneSource(source)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(sourceDir, uploadapi.SocketName))
	}}}
	resp, err := client.Post("http://upload"+uploadapi.Path, "application/octet-stream", strings.NewReader("disk"))
	if err != nil {
		t.Fatalf("the source's socket: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "target got POST disk" {
		t.Errorf("through the relay: %q", b)
	}
	client.CloseIdleConnections()

	ended := source.DeepCopy()
	ended.Status.Phase = corev1.PodSucceeded
	a.SyncCloneSource(ended)
	if _, err := client.Get("http://upload" + uploadapi.Path); err == nil {
		t.Error("the relay still answers after the source Pod ended")
	}
	if len(a.clones) != 0 {
		t.Errorf("relays left: %v", a.clones)
	}
	a.SyncCloneSource(source)
	a.CloseAll()
	if _, err := client.Get("http://upload" + uploadapi.Path); err == nil || len(a.clones) != 0 {
		t.Errorf("a relay survived CloseAll: %v, %v", err, a.clones)
	}
	a.SyncCloneSource(source)
	if len(a.clones) != 0 {
		t.Error("a relay started after CloseAll")
	}
}
