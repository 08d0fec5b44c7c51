package validation

import (
	"strings"

	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// dnsVideoAndSpreadRules are KubeVirt's rules on DNS search domains and options, video devices,
// node field selectors, pod affinity namespaces and spread constraints, which the first
// comparison found Vireo without and which Vireo now applies as KubeVirt does.
var dnsVideoAndSpreadRules = []admitterRule{
	{fn: "validatePodDNSConfig", rule: "at most 6 search domains", field: "searchDomains", vireoField: "spec.dnsConfig.searches",
		note:   "KubeVirt's cause names a bare 'searchDomains'",
		refuse: dns("", &v1.PodDNSConfig{Searches: []string{"a.com", "b.com", "c.com", "d.com", "e.com", "f.com", "g.com"}}),
		accept: dns("", &v1.PodDNSConfig{Searches: []string{"a.com", "b.com", "c.com", "d.com", "e.com", "f.com"}})},
	{fn: "validatePodDNSConfig", rule: "search list at most 256 characters", field: "searchDomains", vireoField: "spec.dnsConfig.searches",
		note: "KubeVirt's cause names a bare 'searchDomains'",
		refuse: dns("", &v1.PodDNSConfig{Searches: []string{
			strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + ".com", strings.Repeat("c", 63) + "." + strings.Repeat("d", 63) + ".com"}}),
		accept: dns("", &v1.PodDNSConfig{Searches: []string{strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + ".com"}})},
	{fn: "validatePodDNSConfig", rule: "search domains are DNS subdomains", field: "searchDomains", vireoField: "spec.dnsConfig.searches",
		note:   "KubeVirt's cause names a bare 'searchDomains'",
		refuse: dns("", &v1.PodDNSConfig{Searches: []string{"Bad_Domain"}}),
		accept: dns("", &v1.PodDNSConfig{Searches: []string{"good.example"}})},
	{fn: "validatePodDNSConfig", rule: "option names required", field: "options", vireoField: "spec.dnsConfig.options",
		note:   "KubeVirt's cause names a bare 'options'",
		refuse: dns("", &v1.PodDNSConfig{Options: []v1.PodDNSConfigOption{{Value: ptr.To("2")}}}),
		accept: dns("", &v1.PodDNSConfig{Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}})},
	{fn: "validateVideoConfig", field: "spec.domain.devices.video",
		note: "KubeVirt names the field spec.video; Vireo the video device's own path",
		refuse: sp(func(s *vmiSpec) {
			s.Domain.Devices.Video, s.Domain.Devices.AutoattachGraphicsDevice = &v1.VideoDevice{Type: "vga"}, ptr.To(false)
		}),
		accept: sp(func(s *vmiSpec) {
			s.Domain.Devices.Video, s.Domain.Devices.AutoattachGraphicsDevice = &v1.VideoDevice{Type: "vga"}, nil
		})},
	{fn: "webhooks.validateVideoTypeAmd64", field: "spec.domain.devices.video.type",
		refuse: sp(func(s *vmiSpec) { s.Domain.Devices.Video = &v1.VideoDevice{} }),
		accept: sp(func(s *vmiSpec) { s.Domain.Devices.Video = &v1.VideoDevice{Type: "bochs"} })},
	{fn: "validateSpecAffinity", rule: "node field selector requirements",
		field:  "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0]",
		refuse: nodeFields(v1.NodeSelectorRequirement{Key: "kubernetes.io/hostname", Operator: "In", Values: []string{"n1"}}),
		accept: nodeFields(v1.NodeSelectorRequirement{Key: "metadata.name", Operator: "In", Values: []string{"n1"}})},
	{fn: "validateSpecAffinity", rule: "pod affinity term namespaces",
		field:  "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaces",
		refuse: podAffinity(v1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", Namespaces: []string{"Bad_Namespace"}}),
		accept: podAffinity(v1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", Namespaces: []string{"good-namespace"}})},
	{fn: "validateSpecTopologySpreadConstraints", rule: "no repeated topologyKey and whenUnsatisfiable",
		field:  "spec.topologySpreadConstraints[1]",
		refuse: spreads("DoNotSchedule", "DoNotSchedule"), accept: spreads("DoNotSchedule", "ScheduleAnyway")},
	{fn: "validateSpecTopologySpreadConstraints", rule: "label selector", field: "spec.topologySpreadConstraints[0].labelSelector",
		refuse: sp(func(s *vmiSpec) {
			s.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "DoNotSchedule",
				LabelSelector: podTerm("Near", nil).LabelSelector}}
		}),
		accept: sp(func(s *vmiSpec) {
			s.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "DoNotSchedule",
				LabelSelector: podTerm("In", []string{"web"}).LabelSelector}}
		})},
}

func nodeFields(r v1.NodeSelectorRequirement) mutation {
	return sp(func(s *vmiSpec) {
		s.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{r}}}}}}
	})
}

// spreads are two spread constraints on the zone, with the given whenUnsatisfiable.
func spreads(first, second string) mutation {
	return sp(func(s *vmiSpec) {
		s.TopologySpreadConstraints = []v1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: first}, {MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: second}}
	})
}
