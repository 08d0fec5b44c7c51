package v1beta1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// DataVolumeFields are the fields a DataVolume can be selected by, besides metadata.name and
// metadata.namespace. The server's field selectors and the registry's attributes both come from here.
func DataVolumeFields(o *DataVolume) fields.Set {
	return fields.Set{"status.phase": string(o.Status.Phase)}
}

// addFieldLabelConversions lets clients select DataVolumes by the fields above.
func addFieldLabelConversions(scheme *runtime.Scheme) error {
	allowed := DataVolumeFields(&DataVolume{})
	err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind("DataVolume"),
		func(label, value string) (string, string, error) {
			if _, ok := allowed[label]; ok {
				return label, value, nil
			}
			return runtime.DefaultMetaV1FieldSelectorConversion(label, value)
		})
	if err != nil {
		return fmt.Errorf("registering field selectors of DataVolume: %w", err)
	}
	return nil
}
