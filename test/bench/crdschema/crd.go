package crdschema

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/openapi"
)

// VMICRDOptions describe the VirtualMachineInstance CRD to build.
type VMICRDOptions struct {
	// Group is the CRD's API group; it must differ from kubevirt.io, which Vireo serves.
	Group string
	// StatusSubresource serves status at /status and makes the main resource ignore it. KubeVirt's
	// VMI CRD has none: its mutating webhook sets status.phase on create, which a status
	// subresource would drop (the CRD strategy clears status after mutating admission).
	StatusSubresource bool
	Schema            Options
}

// VMICRD is the VirtualMachineInstance kind of Vireo's kubevirt.io/v1 API as a CRD in another
// group: same kind and plural, version v1, Vireo's printer columns, and the structural schema
// converted from Vireo's generated OpenAPI definitions.
func VMICRD(o VMICRDOptions) (*apiextensionsv1.CustomResourceDefinition, error) {
	schema, err := NewConverter(openapi.GetOpenAPIDefinitions, o.Schema).Root(v1.VirtualMachineInstance{}.OpenAPIModelName())
	if err != nil {
		return nil, err
	}
	version := apiextensionsv1.CustomResourceDefinitionVersion{
		Name: "v1", Served: true, Storage: true,
		Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema},
		AdditionalPrinterColumns: vmiColumns(),
	}
	if o.StatusSubresource {
		version.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "virtualmachineinstances." + o.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: o.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "VirtualMachineInstance", ListKind: "VirtualMachineInstanceList",
				Plural: "virtualmachineinstances", Singular: "virtualmachineinstance",
				// Not vmi: that short name is kubevirt.io's, served by Vireo on the same cluster.
				ShortNames: []string{"benchvmi"},
			},
			Scope:    apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version},
		},
	}, nil
}

// vmiColumns are the columns Vireo's registry prints for VMIs (KubeVirt's): AGE PHASE IP
// NODENAME READY, and with -o wide LIVE-MIGRATABLE PAUSED.
func vmiColumns() []apiextensionsv1.CustomResourceColumnDefinition {
	condition := func(t v1.VirtualMachineInstanceConditionType) string {
		return ".status.conditions[?(@.type=='" + string(t) + "')].status"
	}
	return []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		{Name: "Phase", Type: "string", JSONPath: ".status.phase", Description: "Lifecycle phase of the instance."},
		{Name: "IP", Type: "string", JSONPath: ".status.interfaces[0].ipAddress", Description: "IP address of the first interface."},
		{Name: "NodeName", Type: "string", JSONPath: ".status.nodeName", Description: "Node the instance runs on."},
		{Name: "Ready", Type: "string", JSONPath: condition(v1.VirtualMachineInstanceReady), Description: "Status of the Ready condition."},
		{Name: "Live-Migratable", Type: "string", JSONPath: condition(v1.VirtualMachineInstanceIsMigratable), Description: "Status of the LiveMigratable condition.", Priority: 1},
		{Name: "Paused", Type: "string", JSONPath: condition(v1.VirtualMachineInstancePaused), Description: "Status of the Paused condition.", Priority: 1},
	}
}
