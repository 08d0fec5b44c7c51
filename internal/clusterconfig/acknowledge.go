package clusterconfig

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// retryAfter is how long Acknowledge waits after a failed status write before trying again.
const retryAfter = 5 * time.Second

// Acknowledge records, until ctx ends, the generation of the KubeVirt object whose settings this
// Config serves in the object's status.observedGeneration: once it equals metadata.generation,
// launcher Pods created from then on follow the object's current spec (`kubectl wait` can tell).
// Only vireo-controller's leader runs it; node agents only read.
func (c *Config) Acknowledge(ctx context.Context, client versioned.Interface) {
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.changed:
		case <-retry.C:
		}
		if err := c.acknowledge(ctx, client); err != nil {
			klog.FromContext(ctx).Info("Could not record the settings' generation in the KubeVirt object; retrying", "err", err, "after", retryAfter)
			retry.Reset(retryAfter)
		}
	}
}

// acknowledge writes status.observedGeneration when it lags behind the object's generation.
func (c *Config) acknowledge(ctx context.Context, client versioned.Interface) error {
	s := c.Get()
	kv := s.Object
	if kv == nil || !needsAcknowledging(kv) {
		return nil
	}
	patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q},"status":{"observedGeneration":%d}}`, kv.ResourceVersion, kv.Generation)
	_, err := client.KubevirtV1().KubeVirts(kv.Namespace).Patch(ctx, kv.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // changed or deleted since: its informer event brings the next round
	}
	if err != nil {
		return fmt.Errorf("patching the status of KubeVirt %s/%s: %w", kv.Namespace, kv.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Took up the cluster settings", "kubevirt", klog.KObj(kv), "generation", kv.Generation)
	return nil
}

// needsAcknowledging reports whether kv's status does not yet name its current generation.
func needsAcknowledging(kv *v1.KubeVirt) bool {
	g := kv.Status.ObservedGeneration
	return g == nil || *g != kv.Generation
}
