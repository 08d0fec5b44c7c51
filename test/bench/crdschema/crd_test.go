package crdschema

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func vmiCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, err := VMICRD(VMICRDOptions{Group: "bench.vireo.dev", Schema: Options{Descriptions: true}})
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// TestSchemaIsStructural checks the converted schema with the API server's own structural
// schema rules, so a schema kube-apiserver would refuse (or not prune with) fails here first.
func TestSchemaIsStructural(t *testing.T) {
	crd := vmiCRD(t)
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatalf("not structural: %v", err)
	}
	if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), s); len(errs) > 0 {
		t.Fatalf("not structural: %v", errs.ToAggregate())
	}
}

// TestCRDValidates runs the CustomResourceDefinition through the validation kube-apiserver
// applies on create.
func TestCRDValidates(t *testing.T) {
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(vmiCRD(t), &internal, nil); err != nil {
		t.Fatal(err)
	}
	internal.Status.StoredVersions = []string{"v1"} // set by the server
	if errs := validation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
		t.Fatalf("kube-apiserver would refuse the CRD: %v", errs.ToAggregate())
	}
}

// TestSchemaShape spot-checks the conversion rules: references resolved inline, quantities as
// int-or-string, times as date-time strings, metadata opaque, maps as additionalProperties,
// list types kept, no defaults.
func TestSchemaShape(t *testing.T) {
	root := vmiCRD(t).Spec.Versions[0].Schema.OpenAPIV3Schema
	at := func(path string) apiextensionsv1.JSONSchemaProps {
		t.Helper()
		s := *root
		for _, p := range strings.Split(path, ".") {
			switch {
			case p == "[]":
				if s.Items == nil || s.Items.Schema == nil {
					t.Fatalf("%s: no items", path)
				}
				s = *s.Items.Schema
			case p == "{}":
				if s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil {
					t.Fatalf("%s: no additionalProperties", path)
				}
				s = *s.AdditionalProperties.Schema
			default:
				next, ok := s.Properties[p]
				if !ok {
					t.Fatalf("%s: no property %q", path, p)
				}
				s = next
			}
		}
		return s
	}
	if m := at("metadata"); m.Type != "object" || len(m.Properties) > 0 {
		t.Errorf("metadata = %+v, want a bare object", m)
	}
	if q := at("spec.domain.resources.requests.{}"); !q.XIntOrString || q.Type != "" || q.Pattern == "" {
		t.Errorf("quantity = %+v, want int-or-string with a pattern", q)
	}
	if ts := at("status.phaseTransitionTimestamps.[].phaseTransitionTimestamp"); ts.Type != "string" || ts.Format != "date-time" {
		t.Errorf("time = %s/%s, want string/date-time", ts.Type, ts.Format)
	}
	if img := at("spec.volumes.[].containerDisk.image"); img.Type != "string" || img.Description == "" {
		t.Errorf("containerDisk.image = %+v, want a described string", img)
	}
	if c := at("status.conditions"); c.XListType == nil || *c.XListType != "map" || len(c.XListMapKeys) != 1 {
		t.Errorf("status.conditions list type = %v keys %v, want map keyed by type", c.XListType, c.XListMapKeys)
	}
	if sel := at("spec.nodeSelector"); sel.Type != "object" || sel.AdditionalProperties == nil || sel.AdditionalProperties.Schema.Type != "string" {
		t.Errorf("nodeSelector = %+v, want a map of strings", sel)
	}
	var walk func(path string, s apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s apiextensionsv1.JSONSchemaProps) {
		// The only default kept is that of a list-map key items may omit (server-side apply needs it).
		if s.Default != nil && path != ".spec.domain.devices.interfaces[].ports[].protocol" {
			t.Errorf("%s has a default; defaults belong to the mutating webhook", path)
		}
		if s.Ref != nil {
			t.Errorf("%s still refers to %s", path, *s.Ref)
		}
		for name, p := range s.Properties {
			walk(path+"."+name, p)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", *s.Items.Schema)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(path+"{}", *s.AdditionalProperties.Schema)
		}
	}
	walk("", *root)
}
