// Package apiclient configures the API clients of Vireo's own components: they send and ask for
// protobuf (application/vnd.kubernetes.protobuf), which kube-apiserver and vireo-apiserver both
// serve for every type they read and write, and which costs a fraction of JSON's CPU to encode
// and decode; JSON stays acceptable as an answer.
package apiclient

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// AcceptProtobuf is the Accept header of a client that prefers protobuf but takes JSON.
const AcceptProtobuf = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON

// PreferProtobuf returns a copy of cfg whose typed clients (Kubernetes' and Vireo's generated
// clientsets) encode requests in protobuf and ask for protobuf answers. Dynamic and discovery
// clients built from it set their own content types.
func PreferProtobuf(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.ContentType = runtime.ContentTypeProtobuf
	out.AcceptContentTypes = AcceptProtobuf
	return out
}
