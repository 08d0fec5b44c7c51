// Package v1beta1 holds the cdi.kubevirt.io/v1beta1 DataVolume type that vireo-apiserver serves,
// in the Containerized Data Importer's JSON wire format, for importing disk images into volumes.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.vireo-dev.vireo.apis.cdi.v1beta1
// +k8s:defaulter-gen=TypeMeta
// +groupName=cdi.kubevirt.io
package v1beta1
