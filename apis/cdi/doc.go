// Package cdi holds the internal (hub) form of the cdi.kubevirt.io API types, which the server's
// storage, defaulting and validation work on; versioned packages convert to and from it. The type
// files (zz_generated.*_types.go) are copies of the v1beta1 ones made by hack/update-codegen.sh.
//
// +k8s:deepcopy-gen=package
// +groupName=cdi.kubevirt.io
package cdi
