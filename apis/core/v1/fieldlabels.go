package v1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// Field selectors the server accepts, besides metadata.name and metadata.namespace. Each node
// agent watches only the VMIs on its node (status.nodeName); the registry's GetAttrs must report
// the same fields.
var fieldSelectors = map[string][]string{
	"VirtualMachineInstance":          {"status.nodeName", "status.phase"},
	"VirtualMachineInstanceMigration": {"spec.vmiName", "status.phase"},
	"VirtualMachine":                  {"status.printableStatus"},
}

// FieldSelectors returns the field selector labels, other than metadata.name and
// metadata.namespace, that the given kind supports.
func FieldSelectors(kind string) []string {
	return append([]string(nil), fieldSelectors[kind]...)
}

// addFieldLabelConversions lets clients select objects of this version by the fields above.
func addFieldLabelConversions(scheme *runtime.Scheme) error {
	for kind, fields := range fieldSelectors {
		allowed := map[string]bool{}
		for _, f := range fields {
			allowed[f] = true
		}
		err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind(kind),
			func(label, value string) (string, string, error) {
				if allowed[label] {
					return label, value, nil
				}
				return runtime.DefaultMetaV1FieldSelectorConversion(label, value)
			})
		if err != nil {
			return fmt.Errorf("registering field selectors of %s: %w", kind, err)
		}
	}
	return nil
}
