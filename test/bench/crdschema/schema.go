// Package crdschema turns the OpenAPI definitions Vireo generates for its types into the
// structural OpenAPI v3 schema of a CustomResourceDefinition, so a benchmark can install the
// very same VirtualMachineInstance schema as a CRD, the way KubeVirt serves it.
package crdschema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// refPrefix turns a model name into a JSON reference and back.
const refPrefix = "#/definitions/"

// quantityPattern is the pattern of a resource.Quantity string, as controller-gen (and so
// KubeVirt's CRDs) write it.
const quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

// Options adjust the conversion.
type Options struct {
	// Descriptions keeps field descriptions (so `kubectl explain` works on the CRD, as it does
	// on KubeVirt's). Without it the schema is much smaller.
	Descriptions bool
}

// Converter resolves references between OpenAPI definitions while converting them.
type Converter struct {
	defs map[string]common.OpenAPIDefinition
	opts Options
}

// NewConverter loads the definitions of getDefs (such as the generated openapi package's
// GetOpenAPIDefinitions).
func NewConverter(getDefs common.GetOpenAPIDefinitions, opts Options) *Converter {
	ref := func(name string) spec.Ref { return spec.MustCreateRef(refPrefix + name) }
	return &Converter{defs: getDefs(ref), opts: opts}
}

// Root converts the definition of a top-level kind (model name) into the schema of a custom
// resource: every reference resolved inline, metadata reduced to `type: object` (the API server
// owns its schema), and no defaults (defaulting is the mutating webhook's job) but those of
// list-map keys items may omit, which kube-apiserver requires.
func (c *Converter) Root(model string) (*apiextensionsv1.JSONSchemaProps, error) {
	def, ok := c.defs[model]
	if !ok {
		return nil, fmt.Errorf("no OpenAPI definition %q", model)
	}
	out, err := c.convert(def.Schema, []string{model}, model)
	if err != nil {
		return nil, err
	}
	if _, ok := out.Properties["metadata"]; ok {
		// Not even a description: kube-apiserver allows a custom resource's schema to say
		// nothing about metadata beyond name and generateName.
		out.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{Type: "object"}
	}
	return &out, nil
}

// special are the types whose schema is a fixed form rather than their Go structure.
func (c *Converter) special(model string, nested bool) (apiextensionsv1.JSONSchemaProps, bool) {
	yes := true
	switch model {
	case resource.Quantity{}.OpenAPIModelName(), intstr.IntOrString{}.OpenAPIModelName():
		s := apiextensionsv1.JSONSchemaProps{
			XIntOrString: true,
			AnyOf:        []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
		}
		if model == (resource.Quantity{}).OpenAPIModelName() {
			s.Pattern = quantityPattern
		}
		return s, true
	case metav1.Time{}.OpenAPIModelName(), metav1.MicroTime{}.OpenAPIModelName():
		return apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time"}, true
	case metav1.Duration{}.OpenAPIModelName():
		return apiextensionsv1.JSONSchemaProps{Type: "string"}, true
	case metav1.ObjectMeta{}.OpenAPIModelName():
		if !nested {
			return apiextensionsv1.JSONSchemaProps{Type: "object"}, true
		}
		// Embedded metadata (a template's) is kept whole, as KubeVirt's CRDs do.
		return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}, true
	case runtime.RawExtension{}.OpenAPIModelName():
		return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}, true
	}
	return apiextensionsv1.JSONSchemaProps{}, false
}

// convert converts one schema found at path (for error messages); stack holds the models being
// expanded, to refuse recursive types (a structural schema cannot express them).
func (c *Converter) convert(s spec.Schema, stack []string, path string) (apiextensionsv1.JSONSchemaProps, error) {
	if ref := s.Ref.String(); ref != "" {
		return c.resolve(s, strings.TrimPrefix(ref, refPrefix), stack, path)
	}
	if len(s.AllOf) == 1 && s.AllOf[0].Ref.String() != "" && len(s.Properties) == 0 && len(s.Type) == 0 {
		// openapi-gen's form of "a reference with its own description/default".
		inner := s.AllOf[0]
		inner.Description = s.Description
		return c.convert(inner, stack, path)
	}
	if len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 || s.Not != nil {
		return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("%s: allOf/anyOf/oneOf/not are not supported here", path)
	}
	out := apiextensionsv1.JSONSchemaProps{
		Format:           s.Format,
		Pattern:          s.Pattern,
		Maximum:          s.Maximum,
		Minimum:          s.Minimum,
		MaxLength:        s.MaxLength,
		MinLength:        s.MinLength,
		MaxItems:         s.MaxItems,
		MinItems:         s.MinItems,
		MultipleOf:       s.MultipleOf,
		Required:         s.Required,
		Nullable:         s.Nullable,
		ExclusiveMaximum: s.ExclusiveMaximum,
		ExclusiveMinimum: s.ExclusiveMinimum,
	}
	if c.opts.Descriptions {
		out.Description = s.Description
	}
	switch len(s.Type) {
	case 0:
		if len(s.Properties) == 0 {
			return out, fmt.Errorf("%s: no type", path)
		}
		out.Type = "object"
	case 1:
		out.Type = s.Type[0]
	default:
		return out, fmt.Errorf("%s: several types %v", path, s.Type)
	}
	if err := c.enum(&out, s.Enum, path); err != nil {
		return out, err
	}
	if err := c.extensions(&out, s.Extensions, path); err != nil {
		return out, err
	}
	if err := c.children(&out, s, stack, path); err != nil {
		return out, err
	}
	return out, nil
}

// resolve converts a reference to model, keeping the referring field's description.
func (c *Converter) resolve(s spec.Schema, model string, stack []string, path string) (apiextensionsv1.JSONSchemaProps, error) {
	out, ok := c.special(model, len(stack) > 1)
	if !ok {
		for _, m := range stack {
			if m == model {
				return out, fmt.Errorf("%s: %s refers to itself; a structural schema cannot express recursion", path, model)
			}
		}
		def, found := c.defs[model]
		if !found {
			return out, fmt.Errorf("%s: no OpenAPI definition %q", path, model)
		}
		var err error
		if out, err = c.convert(def.Schema, append(stack, model), path); err != nil {
			return out, err
		}
	}
	if c.opts.Descriptions && s.Description != "" {
		out.Description = s.Description
	}
	return out, nil
}

// children converts properties, map values and list items.
func (c *Converter) children(out *apiextensionsv1.JSONSchemaProps, s spec.Schema, stack []string, path string) error {
	if len(s.Properties) > 0 {
		out.Properties = make(map[string]apiextensionsv1.JSONSchemaProps, len(s.Properties))
		for name, p := range s.Properties {
			conv, err := c.convert(p, stack, path+"."+name)
			if err != nil {
				return err
			}
			out.Properties[name] = conv
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		if ap.Schema == nil {
			out.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: ap.Allows}
		} else {
			conv, err := c.convert(*ap.Schema, stack, path+"[*]")
			if err != nil {
				return err
			}
			out.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &conv}
		}
	}
	if it := s.Items; it != nil {
		if it.Schema == nil || len(it.Schemas) > 0 {
			return fmt.Errorf("%s: list items must have exactly one schema", path)
		}
		conv, err := c.convert(*it.Schema, stack, path+"[]")
		if err != nil {
			return err
		}
		if err := c.keyDefaults(&conv, *it.Schema, out.XListMapKeys, path+"[]"); err != nil {
			return err
		}
		out.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &conv}
	}
	return nil
}

// enum carries enumerated values over.
func (c *Converter) enum(out *apiextensionsv1.JSONSchemaProps, values []any, path string) error {
	for _, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: enum value %v: %w", path, v, err)
		}
		out.Enum = append(out.Enum, apiextensionsv1.JSON{Raw: raw})
	}
	return nil
}

// extensions carries the x-kubernetes-* extensions a CRD schema understands (list and map
// types for server-side apply, int-or-string, preserve-unknown-fields); the strategic-merge
// patch hints have no CRD counterpart (custom resources do not support strategic merge patch).
func (c *Converter) extensions(out *apiextensionsv1.JSONSchemaProps, ext spec.Extensions, path string) error {
	for k, v := range ext {
		switch k {
		case "x-kubernetes-list-type":
			t, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: %s is %T, want a string", path, k, v)
			}
			out.XListType = &t
		case "x-kubernetes-map-type":
			t, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: %s is %T, want a string", path, k, v)
			}
			out.XMapType = &t
		case "x-kubernetes-list-map-keys":
			keys, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%s: %s is %T, want a list", path, k, v)
			}
			for _, key := range keys {
				out.XListMapKeys = append(out.XListMapKeys, fmt.Sprint(key))
			}
		case "x-kubernetes-int-or-string":
			out.XIntOrString = v == true
		case "x-kubernetes-preserve-unknown-fields":
			b := v == true
			out.XPreserveUnknownFields = &b
		case "x-kubernetes-embedded-resource":
			out.XEmbeddedResource = v == true
		}
	}
	return nil
}

// keyDefaults gives the list-map keys that items may leave out the default the API declares for
// them (ports' protocol): kube-apiserver and server-side apply need it. Every other default stays
// with the mutating webhook.
func (c *Converter) keyDefaults(items *apiextensionsv1.JSONSchemaProps, src spec.Schema, keys []string, path string) error {
	if ref := src.Ref.String(); ref != "" {
		src = c.defs[strings.TrimPrefix(ref, refPrefix)].Schema
	}
	for _, key := range keys {
		p, ok := src.Properties[key]
		if !ok || p.Default == nil || slices.Contains(items.Required, key) {
			continue
		}
		raw, err := json.Marshal(p.Default)
		if err != nil {
			return fmt.Errorf("%s.%s: default %v: %w", path, key, p.Default, err)
		}
		prop := items.Properties[key]
		prop.Default = &apiextensionsv1.JSON{Raw: raw}
		items.Properties[key] = prop
	}
	return nil
}
