package migration

import (
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
	policyinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/migrations/v1alpha1"
	policylisters "github.com/vireo-dev/vireo/generated/listers/migrations/v1alpha1"
)

// Policies finds the MigrationPolicy that applies to a VMI, from the informers' caches of the
// policies and of the namespaces (whose labels the policies select).
type Policies struct {
	policies   policylisters.MigrationPolicyLister
	namespaces corelisters.NamespaceLister
	synced     []cache.InformerSynced
}

// NewPolicies reads policies and namespaces from their informers.
func NewPolicies(policies policyinformers.MigrationPolicyInformer, namespaces coreinformers.NamespaceInformer) *Policies {
	return &Policies{policies: policies.Lister(), namespaces: namespaces.Lister(),
		synced: []cache.InformerSynced{policies.Informer().HasSynced, namespaces.Informer().HasSynced}}
}

// For returns the policy of vmi, nil when none selects it.
func (p *Policies) For(vmi *v1.VirtualMachineInstance) (*v1alpha1.MigrationPolicy, error) {
	if p == nil {
		return nil, nil
	}
	all, err := p.policies.List(labels.Everything())
	if err != nil || len(all) == 0 {
		return nil, err
	}
	var nsLabels map[string]string
	if ns, err := p.namespaces.Get(vmi.Namespace); err == nil {
		nsLabels = ns.Labels
	}
	return matchPolicy(all, vmi.Labels, nsLabels), nil
}

// matchPolicy picks KubeVirt's way among the policies whose selectors all match: the most
// matching labels (VMI and namespace together), then the most matching VMI labels, then the
// first name in alphabetical order. Unlike KubeVirt's, a selector's labels must all be present:
// a VMI without labels does not match a policy that names some.
func matchPolicy(policies []*v1alpha1.MigrationPolicy, vmiLabels, nsLabels map[string]string) *v1alpha1.MigrationPolicy {
	var best *v1alpha1.MigrationPolicy
	var bestTotal, bestVMI int
	for _, p := range policies {
		s := p.Spec.Selectors
		if s == nil {
			continue
		}
		vmiMatched, ok := matched(s.VirtualMachineInstanceSelector, vmiLabels)
		if !ok {
			continue
		}
		nsMatched, ok := matched(s.NamespaceSelector, nsLabels)
		if !ok {
			continue
		}
		total := vmiMatched + nsMatched
		better := best == nil || total > bestTotal ||
			(total == bestTotal && (vmiMatched > bestVMI || (vmiMatched == bestVMI && p.Name < best.Name)))
		if better {
			best, bestTotal, bestVMI = p, total, vmiMatched
		}
	}
	return best
}

// matched counts the labels of selector that have has; ok is false when one is missing.
func matched(selector v1alpha1.LabelSelector, has map[string]string) (n int, ok bool) {
	for k, v := range selector {
		if got, present := has[k]; !present || got != v {
			return 0, false
		}
	}
	return len(selector), true
}

// withPolicy is the cluster's settings overridden by the settings policy sets.
func withPolicy(cluster defaults.MigrationSettings, policy *v1alpha1.MigrationPolicy) defaults.MigrationSettings {
	if policy == nil {
		return cluster
	}
	spec := policy.Spec
	disruption := spec.AllowWorkloadDisruption
	if disruption == nil && spec.AllowPostCopy != nil {
		disruption = spec.AllowPostCopy // KubeVirt: unset, it follows the policy's allowPostCopy
	}
	cluster.Apply(&v1.MigrationConfiguration{
		BandwidthPerMigration:   spec.BandwidthPerMigration, // Apply copies it
		CompletionTimeoutPerGiB: spec.CompletionTimeoutPerGiB,
		AllowAutoConverge:       spec.AllowAutoConverge,
		AllowPostCopy:           spec.AllowPostCopy,
		AllowWorkloadDisruption: disruption,
	})
	return cluster
}
