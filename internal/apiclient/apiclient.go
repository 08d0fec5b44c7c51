// Package apiclient configures the API clients of Vireo's own components: they ask for answers
// in protobuf (application/vnd.kubernetes.protobuf), which kube-apiserver and vireo-apiserver
// both serve for every type they read, and which costs a fraction of JSON's CPU to encode and
// decode: lists, watches and the informers on them. Requests go out in JSON, so that during a
// rolling upgrade a component of the new release still writes to a vireo-apiserver of the
// release before, which serves no protobuf (it would refuse a protobuf body with 415; an Accept
// header it cannot meet gets JSON).
package apiclient

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// AcceptProtobuf is the Accept header of a client that prefers protobuf but takes JSON.
const AcceptProtobuf = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON

// PreferProtobuf returns a copy of cfg whose typed clients (Kubernetes' and Vireo's generated
// clientsets) ask for protobuf answers and send JSON. Dynamic and discovery clients built from
// it set their own content types.
func PreferProtobuf(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.ContentType = runtime.ContentTypeJSON
	out.AcceptContentTypes = AcceptProtobuf
	return out
}
