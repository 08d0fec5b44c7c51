package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// applyExamples creates each example object that does not exist yet.
func (c *Cluster) applyExamples(ctx context.Context) error {
	if len(c.opts.Examples) == 0 {
		return nil
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	for _, file := range c.opts.Examples {
		if err := CreateFromFile(ctx, cfg, file, "default"); err != nil {
			return err
		}
		c.say("created the objects of %s (if missing)", file)
	}
	return nil
}

// CreateFromFile creates every object of a multi-document YAML file in namespace ns,
// leaving objects that already exist untouched.
func CreateFromFile(ctx context.Context, cfg *rest.Config, file, ns string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(file), err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", filepath.Base(file), gvk, err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if obj.GetNamespace() == "" {
				obj.SetNamespace(ns)
			}
			ri = dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
		}
		_, err = ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "vireo-local"})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: creating %s %s: %w", filepath.Base(file), gvk.Kind, obj.GetName(), err)
		}
	}
}

func withNegotiatedSerializer(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	return c
}

func (c *Cluster) abs(path string) string {
	if p, err := filepath.Abs(path); err == nil {
		return p
	}
	return path
}
