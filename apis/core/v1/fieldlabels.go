package v1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// VirtualMachineInstanceFields are the fields a VMI can be selected by, besides metadata.name and
// metadata.namespace: each node agent watches only the VMIs of its node (status.nodeName, also an
// index of the server's watch cache) and controllers filter by phase. The server's field
// selectors and the registry's attributes both come from here.
func VirtualMachineInstanceFields(o *VirtualMachineInstance) fields.Set {
	return fields.Set{"status.nodeName": o.Status.NodeName, "status.phase": string(o.Status.Phase)}
}

// VirtualMachineFields are the fields a VirtualMachine can be selected by, besides its name and namespace.
func VirtualMachineFields(o *VirtualMachine) fields.Set {
	return fields.Set{"status.printableStatus": string(o.Status.PrintableStatus)}
}

// VirtualMachineInstanceMigrationFields are the fields a migration can be selected by, besides its
// name and namespace: the VMI it migrates and its phase.
func VirtualMachineInstanceMigrationFields(o *VirtualMachineInstanceMigration) fields.Set {
	return fields.Set{"spec.vmiName": o.Spec.VMIName, "status.phase": string(o.Status.Phase)}
}

// addFieldLabelConversions lets clients select objects of this version by the fields above.
func addFieldLabelConversions(scheme *runtime.Scheme) error {
	return AddFieldLabelConversions(scheme, SchemeGroupVersion)
}

// AddFieldLabelConversions lets clients select objects of gv (a version that serves these
// types) by the fields above.
func AddFieldLabelConversions(scheme *runtime.Scheme, gv schema.GroupVersion) error {
	for kind, set := range map[string]fields.Set{
		"VirtualMachineInstance":          VirtualMachineInstanceFields(&VirtualMachineInstance{}),
		"VirtualMachine":                  VirtualMachineFields(&VirtualMachine{}),
		"VirtualMachineInstanceMigration": VirtualMachineInstanceMigrationFields(&VirtualMachineInstanceMigration{}),
	} {
		if err := scheme.AddFieldLabelConversionFunc(gv.WithKind(kind), fieldLabelConversion(set)); err != nil {
			return fmt.Errorf("registering field selectors of %s: %w", kind, err)
		}
	}
	return nil
}

// fieldLabelConversion accepts the labels of set and the object metadata fields.
func fieldLabelConversion(set fields.Set) runtime.FieldLabelConversionFunc {
	return func(label, value string) (string, string, error) {
		if _, ok := set[label]; ok {
			return label, value, nil
		}
		return runtime.DefaultMetaV1FieldSelectorConversion(label, value)
	}
}
