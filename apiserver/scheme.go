// Package apiserver wires vireo-apiserver: options -> config -> completed config -> server.
// It owns the scheme and codecs, the embedded etcd and the installation of Vireo's API groups.
package apiserver

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	cdiinstall "github.com/vireo-dev/vireo/apis/cdi/install"
	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	coreinstall "github.com/vireo-dev/vireo/apis/core/install"
	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
	instancetypeinstall "github.com/vireo-dev/vireo/apis/instancetype/install"
	instancetypev1beta1 "github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
	migrationsinstall "github.com/vireo-dev/vireo/apis/migrations/install"
	migrationsv1alpha1 "github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
	poolinstall "github.com/vireo-dev/vireo/apis/pool/install"
	poolv1beta1 "github.com/vireo-dev/vireo/apis/pool/v1beta1"
)

// StorageVersions are the versions objects are written to etcd in, one per group.
var StorageVersions = schema.GroupVersions{corev1.SchemeGroupVersion, cdiv1beta1.SchemeGroupVersion, migrationsv1alpha1.SchemeGroupVersion, poolv1beta1.SchemeGroupVersion,
	instancetypev1beta1.SchemeGroupVersion}

// NewScheme builds the scheme of every type vireo-apiserver serves, and its codecs.
func NewScheme() (*runtime.Scheme, serializer.CodecFactory) {
	scheme := runtime.NewScheme()
	coreinstall.Install(scheme)
	cdiinstall.Install(scheme)
	migrationsinstall.Install(scheme)
	poolinstall.Install(scheme)
	instancetypeinstall.Install(scheme)
	// /scale subresources read and write autoscaling/v1 Scale.
	utilruntime.Must(autoscalingv1.AddToScheme(scheme))

	// The generic server encodes options and status objects of the unversioned meta group.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
	// Lists are encoded item by item onto the wire, as the generic server's own group codecs
	// do: encoded whole, an unpaged list of 100,000 VMIs took about 2 GiB more at once and
	// had vireo-apiserver killed at its 4Gi memory limit.
	return scheme, serializer.NewCodecFactory(scheme, serializer.WithStreamingCollectionEncodingToJSON(),
		serializer.WithStreamingCollectionEncodingToProtobuf())
}
