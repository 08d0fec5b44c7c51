// Package v1beta1 holds the pool.kubevirt.io/v1beta1 VirtualMachinePool type that vireo-apiserver
// serves in KubeVirt's JSON wire format: a number of VirtualMachines made from one template,
// named <pool>-<index>, scaled through /scale.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.vireo-dev.vireo.apis.pool.v1beta1
// +k8s:defaulter-gen=TypeMeta
// +groupName=pool.kubevirt.io
package v1beta1
