package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// TestClaimsBindWithTheDefaultStorageClass checks the hostpath provisioner and the
// default StorageClass that DataVolumes and PVC disks rely on.
func TestClaimsBindWithTheDefaultStorageClass(t *testing.T) {
	t.Parallel()
	ctx, ns := context.Background(), namespace(t)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "disk"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "disk", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.ClaimBound, nil
	})
	if err != nil {
		got, _ := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "disk", metav1.GetOptions{})
		t.Fatalf("claim not Bound within 60s: %+v", got.Status)
	}
}

// TestServiceAccountTokensReachVireo authenticates with a ServiceAccount token (the way
// in-cluster programs do) through kube-apiserver to vireo-apiserver.
func TestServiceAccountTokensReachVireo(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "-n", ns, "create", "serviceaccount", "robot")
	token := strings.TrimSpace(kubectl(t, "-n", ns, "create", "token", "robot"))
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = token
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vmis := client.KubevirtV1().VirtualMachineInstances(ns)
	// Authenticated but not authorized: 403, not 401.
	if _, err := vmis.List(context.Background(), metav1.ListOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:serviceaccount:"+ns+":robot") {
		t.Fatalf("unbound ServiceAccount listing VMIs: got %v, want Forbidden naming the ServiceAccount", err)
	}
	kubectl(t, "-n", ns, "create", "rolebinding", "robot-view", "--clusterrole=view", "--serviceaccount="+ns+":robot")
	eventually(t, "ServiceAccount bound to view lists VMIs", func() error {
		_, err := vmis.List(context.Background(), metav1.ListOptions{})
		return err
	})
}
