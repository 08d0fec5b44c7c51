// Package core holds the internal (hub) form of the kubevirt.io API types, which the server's
// storage, defaulting and validation work on; versioned packages convert to and from it. The type
// files (zz_generated.*_types.go) are copies of the v1 ones made by hack/update-codegen.sh.
//
// +k8s:deepcopy-gen=package
// +groupName=kubevirt.io
package core
