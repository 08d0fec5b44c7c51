package nodeagent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
)

// registerUploads serves the relay of the datavolumes/upload subresource: vireo-apiserver
// sends each request of the upload protocol here, and the node agent passes it to the upload
// socket of the DataVolume's importer Pod on this node.
func (a *Agent) registerUploads(mux *http.ServeMux) {
	mux.HandleFunc("GET "+nodeagentapi.UploadPath, a.serveUpload)
	mux.HandleFunc("PUT "+nodeagentapi.UploadPath, a.serveUpload)
}

// uploadRelay relays to one upload Pod's socket. Only the protocol's query parameters and
// headers pass: the socket sees nothing of the user's request but the chunk.
func (a *Agent) uploadRelay(pod *corev1.Pod) *httputil.ReverseProxy {
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
				return a.dirs.dialSocket(ctx, podUID, uploadapi.SocketName)
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

func (a *Agent) serveUpload(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	pod, herr := a.uploadPod(namespace, name, types.UID(r.URL.Query().Get("uid")))
	if herr != nil {
		http.Error(w, herr.msg, herr.code)
		return
	}
	a.uploadRelay(pod).ServeHTTP(w, r)
}

// uploadPod is the running upload Pod on this node of DataVolume namespace/name (with UID
// dvUID when set): labelled for uploads and controlled by that DataVolume. The name of the
// Pod's node comes from an annotation users can edit, so nothing else is trusted.
func (a *Agent) uploadPod(namespace, name string, dvUID types.UID) (*corev1.Pod, *httpError) {
	return uploadPodIn(a.pods, namespace, name, dvUID)
}

// uploadPodIn is uploadPod among pods, the Pods on this node.
func uploadPodIn(pods corelisters.PodLister, namespace, name string, dvUID types.UID) (*corev1.Pod, *httpError) {
	list, err := pods.Pods(namespace).List(labels.SelectorFromSet(labels.Set{v1.AppLabel: v1.UploadApp}))
	if err != nil {
		return nil, &httpError{http.StatusInternalServerError, err.Error()}
	}
	for _, pod := range list {
		ref := metav1.GetControllerOf(pod)
		if ref == nil || ref.Kind != "DataVolume" || ref.Name != name || (dvUID != "" && ref.UID != dvUID) || pod.DeletionTimestamp != nil {
			continue
		}
		if pod.Status.Phase != corev1.PodRunning {
			return nil, &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the upload Pod %s/%s of DataVolume %s is not running (phase %s): try again", namespace, pod.Name, name, pod.Status.Phase)}
		}
		return pod, nil
	}
	return nil, &httpError{http.StatusServiceUnavailable, fmt.Sprintf("no upload Pod of DataVolume %s/%s runs on this node", namespace, name)}
}
