// Package v1alpha1 holds the migrations.kubevirt.io/v1alpha1 MigrationPolicy type that
// vireo-apiserver serves in KubeVirt's JSON wire format: cluster-wide live-migration settings
// (bandwidth, completion timeout, auto-converge, post-copy) for the VMIs and namespaces whose
// labels a policy selects.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.vireo-dev.vireo.apis.migrations.v1alpha1
// +k8s:defaulter-gen=TypeMeta
// +groupName=migrations.kubevirt.io
package v1alpha1
