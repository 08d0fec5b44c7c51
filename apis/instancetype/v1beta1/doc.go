// Package v1beta1 holds the instancetype.kubevirt.io/v1beta1 types that vireo-apiserver serves in
// KubeVirt's JSON wire format: instancetypes (the size of a VM: CPUs, memory, devices it must have)
// and preferences (defaults a VM takes where it sets nothing), each namespaced and cluster-wide.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.vireo-dev.vireo.apis.instancetype.v1beta1
// +k8s:defaulter-gen=TypeMeta
// +groupName=instancetype.kubevirt.io
package v1beta1
