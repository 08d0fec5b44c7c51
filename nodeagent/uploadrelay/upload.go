// Package uploadrelay is the node agent's relay to the upload Pods on its node: the
// datavolumes/upload subresource, which vireo-apiserver sends here and the agent passes to the
// upload socket in the DataVolume's upload Pod's emptyDir, and clones between namespaces,
// whose source Pod sends to an upload socket the agent serves in its own emptyDir and splices
// to the paired target upload Pod's (importer/uploadapi states the pairing).
package uploadrelay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
	"github.com/vireo-dev/vireo/nodeagent/relay"
)

// Relay is the uploads and clones of one node agent.
type Relay struct {
	pods corelisters.PodLister // the Pods on this node
	dirs nodedirs.Dirs

	mu sync.Mutex
	// clones serve the upload socket of clone source Pods, by Pod UID.
	clones map[types.UID]*relay.SocketProxy
	closed bool
}

// New returns a relay to the Pods on this node (pods) through their emptyDirs in dirs.
func New(pods corelisters.PodLister, dirs nodedirs.Dirs) *Relay {
	return &Relay{pods: pods, dirs: dirs, clones: map[types.UID]*relay.SocketProxy{}}
}

// Register serves the relay of the datavolumes/upload subresource: vireo-apiserver sends each
// request of the upload protocol here, and the node agent passes it to the upload socket of
// the DataVolume's upload Pod on this node.
func (u *Relay) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+nodeagentapi.UploadPath, u.serveUpload)
	mux.HandleFunc("PUT "+nodeagentapi.UploadPath, u.serveUpload)
}

// uploadRelay relays to one upload Pod's socket. Only the protocol's query parameters and
// headers pass: the socket sees nothing of the user's request but the chunk.
func (u *Relay) uploadRelay(pod *corev1.Pod) *httputil.ReverseProxy {
	podUID := pod.UID
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			in := pr.In.URL.Query()
			q := url.Values{}
			for _, k := range []string{uploadapi.OffsetParam, uploadapi.FinalParam} {
				if v := in.Get(k); v != "" {
					q.Set(k, v)
				}
			}
			pr.Out.URL = &url.URL{Scheme: "http", Host: "upload", Path: uploadapi.Path, RawQuery: q.Encode()}
			pr.Out.Host = "upload"
			pr.Out.Header = http.Header{}
			for _, h := range []string{"Content-Type", "Accept", uploadapi.SizeHeader} {
				if v := pr.In.Header.Get(h); v != "" {
					pr.Out.Header.Set(h, v)
				}
			}
		},
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return u.dirs.DialSocket(ctx, podUID, uploadapi.SocketName)
			},
			// One connection per request: a chunk's relay never waits behind another's.
			DisableKeepAlives: true,
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			klog.InfoS("Relaying an upload request", "pod", klog.KObj(pod), "method", r.Method, "err", err)
			http.Error(w, fmt.Sprintf("relaying to the upload server of Pod %s/%s: %v", pod.Namespace, pod.Name, err), http.StatusBadGateway)
		},
	}
}

func (u *Relay) serveUpload(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	pod, herr := uploadPod(u.pods, namespace, name, types.UID(r.URL.Query().Get("uid")))
	if herr != nil {
		herr.Write(w)
		return
	}
	u.uploadRelay(pod).ServeHTTP(w, r)
}

// uploadPod is the running upload Pod among pods (those on this node) of DataVolume
// namespace/name (with UID dvUID when set): labelled for uploads and controlled by that
// DataVolume. The name of the Pod's node comes from an annotation users can edit, so nothing
// else is trusted.
func uploadPod(pods corelisters.PodLister, namespace, name string, dvUID types.UID) (*corev1.Pod, *nodeagentapi.Error) {
	list, err := pods.Pods(namespace).List(labels.SelectorFromSet(labels.Set{v1.AppLabel: v1.UploadApp}))
	if err != nil {
		return nil, &nodeagentapi.Error{Code: http.StatusInternalServerError, Message: err.Error()}
	}
	for _, pod := range list {
		ref := metav1.GetControllerOf(pod)
		if ref == nil || ref.Kind != "DataVolume" || ref.Name != name || (dvUID != "" && ref.UID != dvUID) || pod.DeletionTimestamp != nil {
			continue
		}
		if pod.Status.Phase != corev1.PodRunning {
			return nil, &nodeagentapi.Error{Code: http.StatusServiceUnavailable, Message: fmt.Sprintf("the upload Pod %s/%s of DataVolume %s is not running (phase %s): try again", namespace, pod.Name, name, pod.Status.Phase)}
		}
		return pod, nil
	}
	return nil, &nodeagentapi.Error{Code: http.StatusServiceUnavailable, Message: fmt.Sprintf("no upload Pod of DataVolume %s/%s runs on this node", namespace, name)}
}
