// Package crdbaseline installs KubeVirt's design for the benchmarks to measure Vireo against:
// the VirtualMachineInstance kind as a CustomResourceDefinition (group bench.vireo.dev, so it
// does not clash with Vireo's kubevirt.io) stored in the cluster's own etcd, with a mutating
// and a validating admission webhook doing Vireo's defaulting and validation.
package crdbaseline

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/localcluster/pki"
	"github.com/vireo-dev/vireo/test/bench/crdschema"
	"github.com/vireo-dev/vireo/test/bench/measure"
	"github.com/vireo-dev/vireo/test/bench/webhook"
)

// Group is the group of the CRD copy of the VMI kind.
const Group = "bench.vireo.dev"

var (
	// VMIs is the CRD's resource.
	VMIs = schema.GroupVersionResource{Group: Group, Version: "v1", Resource: "virtualmachineinstances"}
	crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// Object is the benchmarks' VMI (measure.VMI) named ns/name as an unstructured object of
// apiVersion gv, so that a client does the same work for Vireo's kind and the CRD's.
func Object(gv schema.GroupVersion, ns, name string) *unstructured.Unstructured {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(measure.VMI(ns, name))
	if err != nil {
		panic(err) // a typed object always converts
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(gv.String())
	return u
}

// StartWebhook serves the webhooks on a free loopback port with a certificate of the
// installation's CA; it returns the server and the CA bundle kube-apiserver must trust.
func StartWebhook(cluster *localcluster.Cluster) (*webhook.Server, []byte, error) {
	dir := cluster.Options().PKI()
	ca, err := pki.LoadOrCreateCA(dir, "ca", "vireo-local-ca")
	if err != nil {
		return nil, nil, err
	}
	cert, err := ca.ServingCert("bench-webhook", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, nil, err
	}
	srv, err := webhook.Start("127.0.0.1:0", cert.CertFile, cert.KeyFile)
	if err != nil {
		return nil, nil, err
	}
	return srv, ca.PEM(), nil
}

// InstallCRD creates the VMI CRD and waits until its resource is served. KubeVirt's VMI CRD
// has no /status subresource; with one (statusSubresource), kube-apiserver drops the status
// the mutating webhook sets on create.
func InstallCRD(ctx context.Context, dyn dynamic.Interface, statusSubresource bool) error {
	crd, err := crdschema.VMICRD(crdschema.VMICRDOptions{Group: Group, StatusSubresource: statusSubresource, Schema: crdschema.Options{Descriptions: true}})
	if err != nil {
		return fmt.Errorf("converting the VMI schema to a CRD: %w", err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return err
	}
	if _, err := dyn.Resource(crds).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := dyn.Resource(crds).Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		var c apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &c); err != nil {
			return false, err
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.NonStructuralSchema && cond.Status == apiextensionsv1.ConditionTrue {
				return false, fmt.Errorf("kube-apiserver finds the schema not structural: %s", cond.Message)
			}
			if cond.Type == apiextensionsv1.Established && cond.Status != apiextensionsv1.ConditionTrue {
				last = fmt.Errorf("not established: %s", cond.Message)
				return false, nil
			}
		}
		_, last = dyn.Resource(VMIs).Namespace("default").List(ctx, metav1.ListOptions{Limit: 1})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not served within 60s: %v (last: %v)", crd.Name, err, last)
	}
	return nil
}

// InstallWebhooks registers the webhooks served at url and waits until kube-apiserver calls
// them: an invalid VMI is denied and a valid one comes back defaulted (dry runs in probeNS,
// which must exist).
func InstallWebhooks(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, url string, caBundle []byte, probeNS string) error {
	mutating, validating := webhook.Configurations(Group, url, caBundle)
	reg := kube.AdmissionregistrationV1()
	if _, err := reg.MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := reg.ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		return err
	}
	invalid := Object(VMIs.GroupVersion(), probeNS, "invalid")
	unstructured.RemoveNestedField(invalid.Object, "spec", "domain", "resources")
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(VMIs).Namespace(probeNS).Create(ctx, invalid, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "denied the request") {
			last = fmt.Sprintf("a VMI without memory was not denied by the validating webhook (error: %v)", err)
			return false, nil
		}
		got, err := dyn.Resource(VMIs).Namespace(probeNS).Create(ctx, Object(VMIs.GroupVersion(), probeNS, "valid"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, fmt.Errorf("creating a valid VMI with the webhooks: %w", err)
		}
		machine, _, _ := unstructured.NestedString(got.Object, "spec", "domain", "machine", "type")
		if machine != "q35" || len(got.GetFinalizers()) == 0 {
			last = "a valid VMI was not defaulted by the mutating webhook"
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("webhooks not in effect within 60s: %v (%s)", err, last)
	}
	return nil
}
