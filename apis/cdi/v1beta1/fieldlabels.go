package v1beta1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// dataVolumeFieldSelectors are the field selectors a DataVolume supports besides metadata.name and
// metadata.namespace; the registry's GetAttrs must report the same fields.
var dataVolumeFieldSelectors = []string{"status.phase"}

// FieldSelectors returns the field selector labels, other than metadata.name and
// metadata.namespace, that the given kind supports.
func FieldSelectors(kind string) []string {
	if kind != "DataVolume" {
		return nil
	}
	return append([]string(nil), dataVolumeFieldSelectors...)
}

// addFieldLabelConversions lets clients select DataVolumes by the fields above.
func addFieldLabelConversions(scheme *runtime.Scheme) error {
	err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind("DataVolume"),
		func(label, value string) (string, string, error) {
			for _, f := range dataVolumeFieldSelectors {
				if label == f {
					return label, value, nil
				}
			}
			return runtime.DefaultMetaV1FieldSelectorConversion(label, value)
		})
	if err != nil {
		return fmt.Errorf("registering field selectors of DataVolume: %w", err)
	}
	return nil
}
