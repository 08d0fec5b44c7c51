// Package v1 holds the kubevirt.io/v1 API types that vireo-apiserver serves
// (VirtualMachineInstance, VirtualMachine, VirtualMachineInstanceMigration, and KubeVirt for
// the cluster's settings), in
// KubeVirt's JSON wire format so existing manifests and clients keep working.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.vireo-dev.vireo.apis.core.v1
// +k8s:defaulter-gen=TypeMeta
// +groupName=kubevirt.io
package v1
