package v1beta1

import (
	"k8s.io/apimachinery/pkg/conversion"

	"github.com/vireo-dev/vireo/apis/cdi"
)

// The two functions below only delegate to the generated ones. They exist because conversion-gen
// does not see generated code of other packages: written by hand, they are what lets the generated
// kubevirt.io/v1 conversions convert the DataVolumeSpec embedded in a VirtualMachine's
// dataVolumeTemplates.

// Convert_v1beta1_DataVolumeSpec_To_cdi_DataVolumeSpec converts a versioned DataVolumeSpec to the internal one.
func Convert_v1beta1_DataVolumeSpec_To_cdi_DataVolumeSpec(in *DataVolumeSpec, out *cdi.DataVolumeSpec, s conversion.Scope) error {
	return autoConvert_v1beta1_DataVolumeSpec_To_cdi_DataVolumeSpec(in, out, s)
}

// Convert_cdi_DataVolumeSpec_To_v1beta1_DataVolumeSpec converts an internal DataVolumeSpec to the versioned one.
func Convert_cdi_DataVolumeSpec_To_v1beta1_DataVolumeSpec(in *cdi.DataVolumeSpec, out *DataVolumeSpec, s conversion.Scope) error {
	return autoConvert_cdi_DataVolumeSpec_To_v1beta1_DataVolumeSpec(in, out, s)
}
