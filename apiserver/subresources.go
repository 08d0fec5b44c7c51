package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	restful "github.com/emicklei/go-restful/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/vireo-dev/vireo/apis/instancetype/apply"
	"github.com/vireo-dev/vireo/registry/expandspec"
	"github.com/vireo-dev/vireo/registry/portforward"
	"github.com/vireo-dev/vireo/registry/vmistream"
)

// streamSubresources are the VMI subresources the node agent streams (websocket upgrades).
var streamSubresources = []string{vmistream.Console, vmistream.VNC}

// longRunningSubresources are the subresources that stream: kube-apiserver's proxy and this
// server keep them open as long as the user does.
var longRunningSubresources = append([]string{portforward.Subresource}, streamSubresources...)

// connecterStorage is a subresource that hands the request to a handler of its own.
type connecterStorage interface {
	rest.Storage
	rest.Connecter
}

// subresourcesHandler serves KubeVirt's paths
// /apis/subresources.kubevirt.io/v1/namespaces/{ns}/{virtualmachineinstances|virtualmachines}/{name}/{subresource}
// with the handlers of kubevirt.io/v1 (connecters, by "resource/subresource"). The server's
// filters have authenticated the user and authorized the verb on the subresource in
// subresources.kubevirt.io.
func subresourcesHandler(connecters map[string]connecterStorage, shot *vmistream.Screenshot, forwarder *portforward.Forwarder, sizes apply.Finder, codecs serializer.CodecFactory) http.Handler {
	gv := schema.GroupVersion{Group: SubresourcesGroupVersion.Group, Version: SubresourcesGroupVersion.Version}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fail := func(err error) { responsewriters.ErrorNegotiated(err, codecs, gv, w, req) }
		info, ok := genericapirequest.RequestInfoFrom(req.Context())
		if ok && info.Resource == expandspec.NamespacedPath && info.Name == "" && info.Namespace != "" && req.Method == http.MethodPut {
			expandspec.ServeNamespaced(req.Context(), sizes, info.Namespace, w, req, fail)
			return
		}
		if !ok || !info.IsResourceRequest || (info.Resource != "virtualmachineinstances" && info.Resource != "virtualmachines") || info.Name == "" || info.Namespace == "" {
			fail(apierrors.NewNotFound(schema.GroupResource{Group: gv.Group, Resource: strings.TrimPrefix(req.URL.Path, "/apis/"+gv.String()+"/")}, ""))
			return
		}
		if len(info.Parts) == 4 && info.Parts[2] == "vnc" && info.Parts[3] == "screenshot" && req.Method == http.MethodGet {
			serveScreenshot(shot, gv.Group, info.Namespace, info.Name, w, req, codecs)
			return
		}
		if info.Subresource == portforward.Subresource && len(info.Parts) > 3 && req.Method == http.MethodGet {
			servePortForward(forwarder, info, w, req, fail)
			return
		}
		path := info.Resource + "/" + info.Subresource
		st, ok := connecters[path]
		if !ok || len(info.Parts) != 3 {
			fail(apierrors.NewNotFound(schema.GroupResource{Group: gv.Group, Resource: path}, info.Name))
			return
		}
		if !slices.Contains(st.ConnectMethods(), req.Method) {
			fail(apierrors.NewMethodNotSupported(schema.GroupResource{Group: gv.Group, Resource: path}, req.Method))
			return
		}
		ctx := genericapirequest.WithNamespace(req.Context(), info.Namespace)
		h, err := st.Connect(ctx, info.Name, nil, &responder{fail: fail, w: w, codecs: codecs, gv: gv})
		if err != nil {
			fail(err)
			return
		}
		h.ServeHTTP(w, req.WithContext(ctx))
	})
}

// servePortForward answers .../NAME/portforward/PORT[/PROTOCOL]: refusals as API errors before
// the upgrade, then the tunnel.
func servePortForward(forwarder *portforward.Forwarder, info *genericapirequest.RequestInfo, w http.ResponseWriter, req *http.Request, fail func(error)) {
	target, err := portforward.ParseTarget(info.Parts[3:])
	if err == nil {
		err = vmistream.CheckUpgrade(req, "port-forward")
	}
	ctx := genericapirequest.WithNamespace(req.Context(), info.Namespace)
	var h http.Handler
	if err == nil {
		h, err = forwarder.Handler(ctx, info.Resource, info.Name, target)
	}
	if err != nil {
		fail(err)
		return
	}
	h.ServeHTTP(w, req.WithContext(ctx))
}

// responder writes a Connecter's errors and objects for a request outside go-restful.
type responder struct {
	fail   func(error)
	w      http.ResponseWriter
	codecs serializer.CodecFactory
	gv     schema.GroupVersion
}

func (r *responder) Object(code int, obj runtime.Object) {
	data, err := runtime.Encode(r.codecs.LegacyCodec(r.gv), obj)
	if err != nil {
		r.fail(err)
		return
	}
	r.w.Header().Set("Content-Type", "application/json")
	r.w.WriteHeader(code)
	_, _ = r.w.Write(data)
}

func (r *responder) Error(err error) { r.fail(err) }

// installScreenshotRoute adds GET .../virtualmachineinstances/{name}/vnc/screenshot to the
// kubevirt.io/v1 web service: the generic installer takes only one subresource segment.
func installScreenshotRoute(gs *genericapiserver.GenericAPIServer, shot *vmistream.Screenshot, codecs serializer.CodecFactory) error {
	root := "/apis/kubevirt.io/v1"
	for _, ws := range gs.Handler.GoRestfulContainer.RegisteredWebServices() {
		if ws.RootPath() != root {
			continue
		}
		ws.Route(ws.GET("/namespaces/{namespace}/virtualmachineinstances/{name}/vnc/screenshot").
			To(func(req *restful.Request, resp *restful.Response) {
				serveScreenshot(shot, "kubevirt.io", req.PathParameter("namespace"), req.PathParameter("name"), resp.ResponseWriter, req.Request, codecs)
			}).
			Doc("PNG screenshot of the VMI's display; moveCursor=true moves the pointer first. Needs get on virtualmachineinstances/vnc/screenshot.").
			Operation("readNamespacedVirtualMachineInstanceVNCScreenshot").
			Param(ws.PathParameter("namespace", "object name and auth scope, such as for teams and projects").DataType("string")).
			Param(ws.PathParameter("name", "name of the VirtualMachineInstance").DataType("string")).
			Param(ws.QueryParameter("moveCursor", "move the pointer before taking the screenshot").DataType("boolean")).
			Produces("image/png"))
		return nil
	}
	return fmt.Errorf("no web service at %s for the screenshot route", root)
}

// serveScreenshot answers a screenshot request of either group.
func serveScreenshot(shot *vmistream.Screenshot, group, namespace, name string, w http.ResponseWriter, req *http.Request, codecs serializer.CodecFactory) {
	h, err := shot.Handler(req.Context(), group, namespace, name, req.URL.Query())
	if err != nil {
		responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{Group: group, Version: "v1"}, w, req)
		return
	}
	h.ServeHTTP(w, req)
}
