package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/openapi"
)

// APIServices are the group versions vireo-apiserver serves through aggregation.
var APIServices = []schema.GroupVersion{
	{Group: "kubevirt.io", Version: "v1"},
	{Group: "subresources.kubevirt.io", Version: "v1"},
	{Group: "cdi.kubevirt.io", Version: "v1beta1"},
	{Group: "kubevirt.io", Version: "v1alpha3"},
	{Group: "subresources.kubevirt.io", Version: "v1alpha3"},
	{Group: "migrations.kubevirt.io", Version: "v1alpha1"},
	{Group: "pool.kubevirt.io", Version: "v1beta1"},
	{Group: "pool.kubevirt.io", Version: "v1alpha1"},
	{Group: "instancetype.kubevirt.io", Version: "v1beta1"},
}

var apiServiceResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// APIServiceStatus reports whether each APIService is Available, with the reason when not.
func (c *Cluster) APIServiceStatus(ctx context.Context) (map[string]string, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, gv := range APIServices {
		name := gv.Version + "." + gv.Group
		obj, err := dyn.Resource(apiServiceResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			out[name] = err.Error()
			continue
		}
		out[name] = availability(obj)
	}
	return out, nil
}

func availability(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			if m["status"] == "True" {
				return "Available"
			}
			return fmt.Sprintf("not available: %v: %v", m["reason"], m["message"])
		}
	}
	return "not available: no condition yet"
}

// WaitForAPIServices polls until every APIService is Available, kube-apiserver's
// aggregated discovery lists Vireo's resources (it refreshes a moment after
// availability; kubectl reads it), and its OpenAPI v3 index lists Vireo's group
// versions with documents that describe their kinds (aggregated a moment later still;
// `kubectl explain` reads them).
func (c *Cluster) WaitForAPIServices(ctx context.Context, timeout time.Duration) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	var last any
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		st, err := c.APIServiceStatus(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		last = st
		for _, s := range st {
			if s != "Available" {
				return false, nil
			}
		}
		if missing := missingFromDiscovery(dc); len(missing) > 0 {
			last = fmt.Sprintf("APIServices Available; discovery still lacks %v", missing)
			return false, nil
		}
		if missing := missingFromOpenAPI(ctx, dc); len(missing) > 0 {
			last = fmt.Sprintf("APIServices Available and in discovery; OpenAPI v3 still lacks %v", missing)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("APIServices not ready within %s: %v", timeout, last)
	}
	return nil
}

// servedKinds are the group versions whose kinds users look up (subresources.kubevirt.io
// lists no resources of its own yet).
func servedKinds() []schema.GroupVersion {
	var out []schema.GroupVersion
	for _, gv := range APIServices {
		if gv.Group != "subresources.kubevirt.io" {
			out = append(out, gv)
		}
	}
	return out
}

// missingFromOpenAPI lists the served group versions that kube-apiserver's OpenAPI v3
// index (/openapi/v3) does not list yet, or whose document cannot be fetched or
// describes none of the group version's kinds.
func missingFromOpenAPI(ctx context.Context, dc discovery.DiscoveryInterface) []string {
	paths, err := openapi.ToClientWithContext(dc.OpenAPIV3()).PathsWithContext(ctx)
	if err != nil {
		return []string{"/openapi/v3: " + err.Error()}
	}
	var missing []string
	for _, gv := range servedKinds() {
		doc, ok := paths["apis/"+gv.Group+"/"+gv.Version]
		if !ok {
			missing = append(missing, gv.String()+" (not in the index)")
			continue
		}
		body, err := doc.SchemaWithContext(ctx, runtime.ContentTypeJSON)
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s (document: %v)", gv, err))
			continue
		}
		if !describesKindsOf(body, gv) {
			missing = append(missing, gv.String()+" (document describes none of its kinds)")
		}
	}
	return missing
}

// describesKindsOf reports whether an OpenAPI v3 document has a schema tagged with a
// kind of gv, the way `kubectl explain` finds one.
func describesKindsOf(doc []byte, gv schema.GroupVersion) bool {
	var parsed struct {
		Components struct {
			Schemas map[string]struct {
				GVKs []schema.GroupVersionKind `json:"x-kubernetes-group-version-kind"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if json.Unmarshal(doc, &parsed) != nil {
		return false
	}
	for _, s := range parsed.Components.Schemas {
		for _, gvk := range s.GVKs {
			if gvk.GroupVersion() == gv {
				return true
			}
		}
	}
	return false
}

// missingFromDiscovery lists the served group versions whose resources aggregated
// discovery does not show yet.
func missingFromDiscovery(dc discovery.DiscoveryInterface) []string {
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return []string{err.Error()}
	}
	seen := map[string]bool{}
	for _, l := range lists {
		if len(l.APIResources) > 0 {
			seen[l.GroupVersion] = true
		}
	}
	var missing []string
	for _, gv := range servedKinds() {
		if !seen[gv.String()] {
			missing = append(missing, gv.String())
		}
	}
	return missing
}
