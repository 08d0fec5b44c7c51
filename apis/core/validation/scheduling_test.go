package validation

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestNodeSelectorAndTolerations(t *testing.T) {
	tol := func(tt ...v1.Toleration) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.Tolerations = tt }
	}
	t0 := "spec.tolerations[0]"
	runSpecCases(t, []specCase{
		{name: "node selector", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-1"}
		}},
		{name: "bad node selector key", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.NodeSelector = map[string]string{"bad key": "x"}
		}, want: []fe{{invalid, "spec.nodeSelector"}}},
		{name: "valid tolerations", mutate: tol(
			v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "vms", Effect: v1.TaintEffectNoSchedule},
			v1.Toleration{Key: "node.kubernetes.io/unreachable", Operator: v1.TolerationOpExists,
				Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(30))},
			v1.Toleration{Operator: v1.TolerationOpExists},
			v1.Toleration{Key: "dedicated", Value: "vms"})},
		{name: "unknown operator", mutate: tol(v1.Toleration{Key: "a", Operator: "Matches"}),
			want: []fe{{notSupported, t0 + ".operator"}}},
		{name: "no key needs Exists", mutate: tol(v1.Toleration{Operator: v1.TolerationOpEqual, Value: "x"}),
			want: []fe{{invalid, t0 + ".operator"}}},
		{name: "Exists with value", mutate: tol(v1.Toleration{Key: "a", Operator: v1.TolerationOpExists, Value: "x"}),
			want: []fe{{invalid, t0 + ".value"}}},
		{name: "bad key", mutate: tol(v1.Toleration{Key: "a b", Operator: v1.TolerationOpExists}),
			want: []fe{{invalid, t0 + ".key"}}},
		{name: "unknown effect", mutate: tol(v1.Toleration{Key: "a", Effect: "NoRun"}),
			want: []fe{{notSupported, t0 + ".effect"}}},
		{name: "tolerationSeconds needs NoExecute", mutate: tol(v1.Toleration{Key: "a", Effect: v1.TaintEffectNoSchedule,
			TolerationSeconds: ptr.To(int64(5))}), want: []fe{{invalid, t0 + ".effect"}}},
	})
}

func TestNodeAffinityValidation(t *testing.T) {
	na := "spec.affinity.nodeAffinity"
	req := na + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
	withTerms := func(terms ...v1.NodeSelectorTerm) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	expr := func(op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: op, Values: values}}}
	}
	runSpecCases(t, []specCase{
		{name: "In", mutate: withTerms(expr(v1.NodeSelectorOpIn, "a", "b"))},
		{name: "Exists", mutate: withTerms(expr(v1.NodeSelectorOpExists))},
		{name: "Gt", mutate: withTerms(expr(v1.NodeSelectorOpGt, "3"))},
		{name: "match fields", mutate: withTerms(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"node-1"}}}})},
		{name: "no terms", mutate: withTerms(), want: []fe{{required, req}}},
		{name: "In without values", mutate: withTerms(expr(v1.NodeSelectorOpIn)),
			want: []fe{{required, req + "[0].matchExpressions[0].values"}}},
		{name: "Exists with values", mutate: withTerms(expr(v1.NodeSelectorOpDoesNotExist, "a")),
			want: []fe{{forbidden, req + "[0].matchExpressions[0].values"}}},
		{name: "Lt with two values", mutate: withTerms(expr(v1.NodeSelectorOpLt, "1", "2")),
			want: []fe{{required, req + "[0].matchExpressions[0].values"}}},
		{name: "Gt with a word", mutate: withTerms(expr(v1.NodeSelectorOpGt, "three")),
			want: []fe{{invalid, req + "[0].matchExpressions[0].values[0]"}}},
		{name: "unknown operator", mutate: withTerms(expr("Near", "a")),
			want: []fe{{notSupported, req + "[0].matchExpressions[0].operator"}}},
		{name: "bad key", mutate: withTerms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "", Operator: v1.NodeSelectorOpExists}}}),
			want: []fe{{invalid, req + "[0].matchExpressions[0].key"}}},
		{name: "preferred weight", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
				{Weight: 100, Preference: expr(v1.NodeSelectorOpIn, "a")},
				{Weight: 0, Preference: expr(v1.NodeSelectorOpIn)},
			}}}
		}, want: []fe{
			{invalid, na + ".preferredDuringSchedulingIgnoredDuringExecution[1].weight"},
			{required, na + ".preferredDuringSchedulingIgnoredDuringExecution[1].preference.matchExpressions[0].values"},
		}},
	})
}

func TestPodAffinityValidation(t *testing.T) {
	term := func(key string, sel *metav1.LabelSelector) v1.PodAffinityTerm {
		return v1.PodAffinityTerm{TopologyKey: key, LabelSelector: sel}
	}
	good := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn}}}
	pa, paa := "spec.affinity.podAffinity", "spec.affinity.podAntiAffinity"
	runSpecCases(t, []specCase{
		{name: "valid", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Affinity = &v1.Affinity{
				PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
					term("kubernetes.io/hostname", good)}},
				PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
					{Weight: 50, PodAffinityTerm: term("topology.kubernetes.io/zone", good)}}},
			}
		}},
		{name: "errors", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Affinity = &v1.Affinity{
				PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
					term("", good), term("zone", bad)}},
				PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
					{Weight: 101, PodAffinityTerm: term("bad key", nil)}}},
			}
		}, want: []fe{
			{required, pa + ".requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"},
			{required, pa + ".requiredDuringSchedulingIgnoredDuringExecution[1].labelSelector.matchExpressions[0].values"},
			{invalid, paa + ".preferredDuringSchedulingIgnoredDuringExecution[0].weight"},
			{invalid, paa + ".preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey"},
		}},
	})
}

func TestSpreadAndDNSValidation(t *testing.T) {
	spread := func(c v1.TopologySpreadConstraint) func(*v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.TopologySpreadConstraints = []v1.TopologySpreadConstraint{c} }
	}
	dns := func(policy v1.DNSPolicy, servers ...string) func(*v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.DNSPolicy = policy
			if servers != nil {
				s.DNSConfig = &v1.PodDNSConfig{Nameservers: servers}
			}
		}
	}
	tsc := "spec.topologySpreadConstraints[0]"
	runSpecCases(t, []specCase{
		{name: "spread", mutate: spread(v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: "DoNotSchedule"})},
		{name: "spread without skew or key", mutate: spread(v1.TopologySpreadConstraint{WhenUnsatisfiable: "Sometimes"}),
			want: []fe{{invalid, tsc + ".maxSkew"}, {required, tsc + ".topologyKey"}, {notSupported, tsc + ".whenUnsatisfiable"}}},
		{name: "dns None with a server", mutate: dns("None", "10.0.0.10")},
		{name: "dns None without servers", mutate: dns("None"), want: []fe{{required, "spec.dnsConfig.nameservers"}}},
		{name: "dns policy unknown", mutate: dns("Cluster"), want: []fe{{notSupported, "spec.dnsPolicy"}}},
		{name: "dns server not an address", mutate: dns("", "dns.example"), want: []fe{{invalid, "spec.dnsConfig.nameservers[0]"}}},
		{name: "scheduler name", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.SchedulerName = "Not_A_Name" },
			want: []fe{{invalid, "spec.schedulerName"}}},
	})
}
