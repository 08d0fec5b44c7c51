package validation

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/apis/core"
)

func TestNodeSelectorAndTolerations(t *testing.T) {
	tol := func(tt ...core.Toleration) func(s *core.VirtualMachineInstanceSpec) {
		return func(s *core.VirtualMachineInstanceSpec) { s.Tolerations = tt }
	}
	t0 := "spec.tolerations[0]"
	runSpecCases(t, []specCase{
		{name: "node selector", mutate: func(s *core.VirtualMachineInstanceSpec) {
			s.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-1"}
		}},
		{name: "bad node selector key", mutate: func(s *core.VirtualMachineInstanceSpec) {
			s.NodeSelector = map[string]string{"bad key": "x"}
		}, want: []fe{{invalid, "spec.nodeSelector"}}},
		{name: "valid tolerations", mutate: tol(
			core.Toleration{Key: "dedicated", Operator: core.TolerationOpEqual, Value: "vms", Effect: core.TaintEffectNoSchedule},
			core.Toleration{Key: "node.kubernetes.io/unreachable", Operator: core.TolerationOpExists,
				Effect: core.TaintEffectNoExecute, TolerationSeconds: ptr(int64(30))},
			core.Toleration{Operator: core.TolerationOpExists},
			core.Toleration{Key: "dedicated", Value: "vms"})},
		{name: "unknown operator", mutate: tol(core.Toleration{Key: "a", Operator: "Matches"}),
			want: []fe{{notSupported, t0 + ".operator"}}},
		{name: "no key needs Exists", mutate: tol(core.Toleration{Operator: core.TolerationOpEqual, Value: "x"}),
			want: []fe{{invalid, t0 + ".operator"}}},
		{name: "Exists with value", mutate: tol(core.Toleration{Key: "a", Operator: core.TolerationOpExists, Value: "x"}),
			want: []fe{{invalid, t0 + ".value"}}},
		{name: "bad key", mutate: tol(core.Toleration{Key: "a b", Operator: core.TolerationOpExists}),
			want: []fe{{invalid, t0 + ".key"}}},
		{name: "unknown effect", mutate: tol(core.Toleration{Key: "a", Effect: "NoRun"}),
			want: []fe{{notSupported, t0 + ".effect"}}},
		{name: "tolerationSeconds needs NoExecute", mutate: tol(core.Toleration{Key: "a", Effect: core.TaintEffectNoSchedule,
			TolerationSeconds: ptr(int64(5))}), want: []fe{{invalid, t0 + ".effect"}}},
	})
}

func TestNodeAffinityValidation(t *testing.T) {
	na := "spec.affinity.nodeAffinity"
	req := na + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
	withTerms := func(terms ...core.NodeSelectorTerm) func(s *core.VirtualMachineInstanceSpec) {
		return func(s *core.VirtualMachineInstanceSpec) {
			s.Affinity = &core.Affinity{NodeAffinity: &core.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &core.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	expr := func(op core.NodeSelectorOperator, values ...string) core.NodeSelectorTerm {
		return core.NodeSelectorTerm{MatchExpressions: []core.NodeSelectorRequirement{{Key: "zone", Operator: op, Values: values}}}
	}
	runSpecCases(t, []specCase{
		{name: "In", mutate: withTerms(expr(core.NodeSelectorOpIn, "a", "b"))},
		{name: "Exists", mutate: withTerms(expr(core.NodeSelectorOpExists))},
		{name: "Gt", mutate: withTerms(expr(core.NodeSelectorOpGt, "3"))},
		{name: "match fields", mutate: withTerms(core.NodeSelectorTerm{MatchFields: []core.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: core.NodeSelectorOpIn, Values: []string{"node-1"}}}})},
		{name: "no terms", mutate: withTerms(), want: []fe{{required, req}}},
		{name: "In without values", mutate: withTerms(expr(core.NodeSelectorOpIn)),
			want: []fe{{required, req + "[0].matchExpressions[0].values"}}},
		{name: "Exists with values", mutate: withTerms(expr(core.NodeSelectorOpDoesNotExist, "a")),
			want: []fe{{forbidden, req + "[0].matchExpressions[0].values"}}},
		{name: "Lt with two values", mutate: withTerms(expr(core.NodeSelectorOpLt, "1", "2")),
			want: []fe{{required, req + "[0].matchExpressions[0].values"}}},
		{name: "Gt with a word", mutate: withTerms(expr(core.NodeSelectorOpGt, "three")),
			want: []fe{{invalid, req + "[0].matchExpressions[0].values[0]"}}},
		{name: "unknown operator", mutate: withTerms(expr("Near", "a")),
			want: []fe{{notSupported, req + "[0].matchExpressions[0].operator"}}},
		{name: "bad key", mutate: withTerms(core.NodeSelectorTerm{MatchExpressions: []core.NodeSelectorRequirement{
			{Key: "", Operator: core.NodeSelectorOpExists}}}),
			want: []fe{{invalid, req + "[0].matchExpressions[0].key"}}},
		{name: "preferred weight", mutate: func(s *core.VirtualMachineInstanceSpec) {
			s.Affinity = &core.Affinity{NodeAffinity: &core.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []core.PreferredSchedulingTerm{
				{Weight: 100, Preference: expr(core.NodeSelectorOpIn, "a")},
				{Weight: 0, Preference: expr(core.NodeSelectorOpIn)},
			}}}
		}, want: []fe{
			{invalid, na + ".preferredDuringSchedulingIgnoredDuringExecution[1].weight"},
			{required, na + ".preferredDuringSchedulingIgnoredDuringExecution[1].preference.matchExpressions[0].values"},
		}},
	})
}

func TestPodAffinityValidation(t *testing.T) {
	term := func(key string, sel *metav1.LabelSelector) core.PodAffinityTerm {
		return core.PodAffinityTerm{TopologyKey: key, LabelSelector: sel}
	}
	good := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn}}}
	pa, paa := "spec.affinity.podAffinity", "spec.affinity.podAntiAffinity"
	runSpecCases(t, []specCase{
		{name: "valid", mutate: func(s *core.VirtualMachineInstanceSpec) {
			s.Affinity = &core.Affinity{
				PodAffinity: &core.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []core.PodAffinityTerm{
					term("kubernetes.io/hostname", good)}},
				PodAntiAffinity: &core.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []core.WeightedPodAffinityTerm{
					{Weight: 50, PodAffinityTerm: term("topology.kubernetes.io/zone", good)}}},
			}
		}},
		{name: "errors", mutate: func(s *core.VirtualMachineInstanceSpec) {
			s.Affinity = &core.Affinity{
				PodAffinity: &core.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []core.PodAffinityTerm{
					term("", good), term("zone", bad)}},
				PodAntiAffinity: &core.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []core.WeightedPodAffinityTerm{
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
