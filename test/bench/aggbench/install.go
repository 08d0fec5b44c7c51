package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/test/bench/crdbaseline"
)

var vireoVMIs = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}

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

// benchUser is the identity of the measuring clients with -rbac-user.
const benchUser = "vireo-bench-user"

// rbacUserClients are clients of an ordinary user whom RBAC allows to work with both kinds of
// VMI. Unlike the admin (system:masters), such a user costs vireo-apiserver a SubjectAccessReview
// to kube-apiserver for every request whose verb, resource and object name it has not decided in
// the last 10 seconds, and its requests go through API Priority and Fairness in both servers.
func rbacUserClients(ctx context.Context, cluster *localcluster.Cluster, admin *clients) (*clients, error) {
	rules := []rbacv1.PolicyRule{{
		APIGroups: []string{vireoVMIs.Group, crdbaseline.Group},
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
		for _, gvr := range []schema.GroupVersionResource{vireoVMIs, crdbaseline.VMIs} {
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
