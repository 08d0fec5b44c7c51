package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/localcluster/pki"
	"github.com/vireo-dev/vireo/test/bench/crdschema"
	"github.com/vireo-dev/vireo/test/bench/webhook"
)

// crdGroup is the group of the CRD copy of the VMI kind.
const crdGroup = "bench.vireo.dev"

var (
	vireoVMIs = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
	crdVMIs   = schema.GroupVersionResource{Group: crdGroup, Version: "v1", Resource: "virtualmachineinstances"}
	crds      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// clusterOptions are an installation apart from `make up`'s and the e2e suite's (own root,
// network namespace, subnet and ports), so all three can run at once.
func clusterOptions(c config) localcluster.Options {
	opts := localcluster.DefaultOptions(os.Stderr)
	opts.Root, opts.BinDir, opts.ManifestsDir = c.root, c.bin, c.manifests
	opts.Network = localcluster.Network{Netns: "vireo-bench", HostIP: net.IPv4(10, 252, 0, 1), PrefixLen: 24, ClusterCIDR: "10.246.0.0/16"}
	opts.Ports = localcluster.Ports{EtcdClient: 22379, EtcdPeer: 22380, KubeAPIServer: 26443, ControllerManager: 30257, Scheduler: 30259}
	return opts
}

// clients reach the installation as its admin, with no client-side rate limit.
type clients struct {
	cfg  *rest.Config
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func newClients(cluster *localcluster.Cluster) (*clients, error) {
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return nil, err
	}
	return clientsFor(cfg)
}

func clientsFor(cfg *rest.Config) (*clients, error) {
	cfg.QPS, cfg.Burst = -1, 0
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{cfg: cfg, kube: kube, dyn: dyn}, nil
}

// startWebhook serves the webhooks on a free loopback port with a certificate of the
// installation's CA; it returns the server and the CA bundle kube-apiserver must trust.
func startWebhook(cluster *localcluster.Cluster) (*webhook.Server, []byte, error) {
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

// installCRD creates the VMI CRD and waits until its resource is served.
func installCRD(ctx context.Context, cl *clients, statusSubresource bool) error {
	crd, err := crdschema.VMICRD(crdschema.VMICRDOptions{Group: crdGroup, StatusSubresource: statusSubresource, Schema: crdschema.Options{Descriptions: true}})
	if err != nil {
		return fmt.Errorf("converting the VMI schema to a CRD: %w", err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return err
	}
	if _, err := cl.dyn.Resource(crds).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := cl.dyn.Resource(crds).Get(ctx, crd.Name, metav1.GetOptions{})
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
		_, last = cl.dyn.Resource(crdVMIs).Namespace("default").List(ctx, metav1.ListOptions{Limit: 1})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not served within 60s: %v (last: %v)", crd.Name, err, last)
	}
	return nil
}

// installWebhooks registers the webhooks and waits until kube-apiserver calls them: an invalid
// VMI is denied and a valid one comes back defaulted.
func installWebhooks(ctx context.Context, cl *clients, url string, caBundle []byte, probeNS string) error {
	mutating, validating := webhook.Configurations(crdGroup, url, caBundle)
	reg := cl.kube.AdmissionregistrationV1()
	if _, err := reg.MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := reg.ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		return err
	}
	probe := newTarget("probe", cl.dyn, crdVMIs)
	invalid := probe.object(probeNS, "invalid")
	unstructured.RemoveNestedField(invalid.Object, "spec", "domain", "resources")
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cl.dyn.Resource(crdVMIs).Namespace(probeNS).Create(ctx, invalid, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "denied the request") {
			last = fmt.Sprintf("a VMI without memory was not denied by the validating webhook (error: %v)", err)
			return false, nil
		}
		got, err := cl.dyn.Resource(crdVMIs).Namespace(probeNS).Create(ctx, probe.object(probeNS, "valid"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
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

// benchUser is the identity of the measuring clients with -rbac-user.
const benchUser = "vireo-bench-user"

// rbacUserClients are clients of an ordinary user whom RBAC allows to work with both kinds of
// VMI. Unlike the admin (system:masters), such a user costs vireo-apiserver a SubjectAccessReview
// to kube-apiserver for every request whose verb, resource and object name it has not decided in
// the last 10 seconds, and its requests go through API Priority and Fairness in both servers.
func rbacUserClients(ctx context.Context, cluster *localcluster.Cluster, admin *clients) (*clients, error) {
	rules := []rbacv1.PolicyRule{{
		APIGroups: []string{vireoVMIs.Group, crdVMIs.Group},
		Resources: []string{"virtualmachineinstances"},
		Verbs:     []string{"get", "list", "watch", "create", "update"},
	}}
	rbac := admin.kube.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: benchUser}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: benchUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: benchUser},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: benchUser}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	cfg, err := cluster.UserConfig(benchUser, nil)
	if err != nil {
		return nil, err
	}
	cl, err := clientsFor(cfg)
	if err != nil {
		return nil, err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, gvr := range []schema.GroupVersionResource{vireoVMIs, crdVMIs} {
			if _, last = cl.dyn.Resource(gvr).Namespace(seedNS).List(ctx, metav1.ListOptions{Limit: 1}); last != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("user %s not allowed to list VMIs within 30s: %v", benchUser, last)
	}
	return cl, nil
}

// createNamespaces creates the namespaces the measurements use.
func createNamespaces(ctx context.Context, cl *clients, names []string) error {
	for _, n := range names {
		_, err := cl.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// stopController scales vireo-controller to zero: nothing reconciles the CRD's VMIs, so
// nothing may reconcile (and load the machine for) Vireo's either.
func stopController(ctx context.Context, kube kubernetes.Interface) error {
	scale, err := kube.AppsV1().Deployments("vireo-system").GetScale(ctx, "vireo-controller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	scale.Spec.Replicas = 0
	_, err = kube.AppsV1().Deployments("vireo-system").UpdateScale(ctx, "vireo-controller", scale, metav1.UpdateOptions{})
	return err
}

// absolute makes the installation's paths independent of later working-directory changes.
func absolute(c config) (config, error) {
	for _, p := range []*string{&c.out, &c.root, &c.bin, &c.manifests} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return c, err
		}
		*p = abs
	}
	return c, nil
}
