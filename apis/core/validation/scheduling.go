package validation

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// tolerationOperators are the operators a toleration may use.
var tolerationOperators = []v1.TolerationOperator{
	v1.TolerationOpEqual, v1.TolerationOpExists, v1.TolerationOpLt, v1.TolerationOpGt,
}

// taintEffects are the taint effects a toleration may name.
var taintEffects = []v1.TaintEffect{
	v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute,
}

// nodeSelectorOperators are the operators a node selector requirement may use.
var nodeSelectorOperators = []v1.NodeSelectorOperator{
	v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
	v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt,
}

// validateScheduling makes the basic checks of the placement fields copied to the launcher pod,
// so that a mistake is reported here rather than as a failure to create the pod.
func validateScheduling(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))
	if spec.PriorityClassName != "" {
		errs = append(errs, validateDNS1123Subdomain(spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	}
	for i := range spec.Tolerations {
		errs = append(errs, validateToleration(&spec.Tolerations[i], fldPath.Child("tolerations").Index(i))...)
	}
	if a := spec.Affinity; a != nil {
		aPath := fldPath.Child("affinity")
		if a.NodeAffinity != nil {
			errs = append(errs, validateNodeAffinity(a.NodeAffinity, aPath.Child("nodeAffinity"))...)
		}
		if a.PodAffinity != nil {
			errs = append(errs, validatePodAffinityTerms(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
				a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, aPath.Child("podAffinity"))...)
		}
		if a.PodAntiAffinity != nil {
			errs = append(errs, validatePodAffinityTerms(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
				a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, aPath.Child("podAntiAffinity"))...)
		}
	}
	if spec.SchedulerName != "" {
		errs = append(errs, validateDNS1123Subdomain(spec.SchedulerName, fldPath.Child("schedulerName"))...)
	}
	type spreadKey struct{ topologyKey, whenUnsatisfiable string }
	spreads := map[spreadKey]bool{}
	for i := range spec.TopologySpreadConstraints {
		c := &spec.TopologySpreadConstraints[i]
		path := fldPath.Child("topologySpreadConstraints").Index(i)
		errs = append(errs, validateSpread(c, path)...)
		key := spreadKey{c.TopologyKey, c.WhenUnsatisfiable}
		if spreads[key] {
			errs = append(errs, field.Duplicate(path, fmt.Sprintf("{%s, %s}", c.TopologyKey, c.WhenUnsatisfiable)))
		}
		spreads[key] = true
	}
	return append(errs, validateDNS(spec, fldPath)...)
}

// validateSpread checks a topology spread constraint the way a Pod's is checked.
func validateSpread(c *v1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.MaxSkew < 1 {
		errs = append(errs, field.Invalid(fldPath.Child("maxSkew"), c.MaxSkew, "must be at least 1"))
	}
	if c.TopologyKey == "" {
		errs = append(errs, field.Required(fldPath.Child("topologyKey"), "a node label key, such as topology.kubernetes.io/zone"))
	} else {
		errs = append(errs, validateQualifiedName(c.TopologyKey, fldPath.Child("topologyKey"))...)
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("labelSelector"))...)
	return append(errs, fieldcheck.Enum(c.WhenUnsatisfiable, []string{"DoNotSchedule", "ScheduleAnyway"}, fldPath.Child("whenUnsatisfiable"))...)
}

// validateDNS checks the launcher Pod's DNS policy: one of Kubernetes' four, and None only with
// name servers of its own in dnsConfig (at most 3, as a Pod allows).
func validateDNS(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.DNSPolicy != "" {
		errs = append(errs, fieldcheck.Enum(spec.DNSPolicy, []v1.DNSPolicy{"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"}, fldPath.Child("dnsPolicy"))...)
	}
	servers := 0
	if c := spec.DNSConfig; c != nil {
		servers = len(c.Nameservers)
		for i, ns := range c.Nameservers {
			if net.ParseIP(ns) == nil {
				errs = append(errs, field.Invalid(fldPath.Child("dnsConfig", "nameservers").Index(i), ns, "must be an IP address"))
			}
		}
		if servers > 3 {
			errs = append(errs, field.TooMany(fldPath.Child("dnsConfig", "nameservers"), servers, 3))
		}
		errs = append(errs, validateDNSSearchesAndOptions(c, fldPath.Child("dnsConfig"))...)
	}
	if spec.DNSPolicy == "None" && servers == 0 {
		errs = append(errs, field.Required(fldPath.Child("dnsConfig", "nameservers"), "dnsPolicy None needs at least one name server in dnsConfig"))
	}
	return errs
}

// The limits KubeVirt puts on a VMI's DNS search list.
const (
	maxDNSSearches      = 6
	maxDNSSearchListLen = 256
)

// validateDNSSearchesAndOptions checks the search domains (at most 6, 256 characters with the
// spaces between them, each a DNS subdomain) and that every option has a name, as KubeVirt does.
func validateDNSSearchesAndOptions(c *v1.PodDNSConfig, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	searches := fldPath.Child("searches")
	if len(c.Searches) > maxDNSSearches {
		errs = append(errs, field.TooMany(searches, len(c.Searches), maxDNSSearches))
	}
	if n := len(strings.Join(c.Searches, " ")); n > maxDNSSearchListLen {
		errs = append(errs, field.TooLong(searches, "", maxDNSSearchListLen))
	}
	for i, s := range c.Searches {
		errs = append(errs, validateDNS1123Subdomain(s, searches.Index(i))...)
	}
	for i, o := range c.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("options").Index(i).Child("name"), "a resolver option needs a name"))
		}
	}
	return errs
}

// validateToleration checks a toleration's key, operator, value and effect the way a pod's are checked.
func validateToleration(t *v1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, validateQualifiedName(t.Key, fldPath.Child("key"))...)
	}
	errs = append(errs, fieldcheck.OptionalEnum(t.Operator, tolerationOperators, fldPath.Child("operator"))...)
	if t.Key == "" && t.Operator != v1.TolerationOpExists {
		errs = append(errs, field.Invalid(fldPath.Child("operator"), t.Operator,
			"a toleration without a key must use operator Exists (it then tolerates every taint)"))
	}
	if t.Operator == v1.TolerationOpExists && t.Value != "" {
		errs = append(errs, field.Invalid(fldPath.Child("value"), t.Value,
			"must be empty when the operator is Exists"))
	}
	errs = append(errs, fieldcheck.OptionalEnum(t.Effect, taintEffects, fldPath.Child("effect"))...)
	if t.TolerationSeconds != nil && t.Effect != v1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(fldPath.Child("effect"), t.Effect,
			"must be NoExecute when tolerationSeconds is set"))
	}
	return errs
}

// validateQualifiedName reports an error when name is not a qualified name such as example.com/key.
func validateQualifiedName(name string, fldPath *field.Path) field.ErrorList {
	return messagesToError(validation.IsQualifiedName(name), name, fldPath)
}

// validateNodeAffinity checks node selector terms and preference weights.
func validateNodeAffinity(na *v1.NodeAffinity, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		rPath := fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		if len(req.NodeSelectorTerms) == 0 {
			errs = append(errs, field.Required(rPath, "at least one node selector term is required"))
		}
		for i := range req.NodeSelectorTerms {
			errs = append(errs, validateNodeSelectorTerm(&req.NodeSelectorTerms[i], rPath.Index(i))...)
		}
	}
	for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		p := &na.PreferredDuringSchedulingIgnoredDuringExecution[i]
		pPath := fldPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, validateWeight(p.Weight, pPath.Child("weight"))...)
		errs = append(errs, validateNodeSelectorTerm(&p.Preference, pPath.Child("preference"))...)
	}
	return errs
}

// validateNodeSelectorTerm checks every requirement of a node selector term.
func validateNodeSelectorTerm(term *v1.NodeSelectorTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range term.MatchExpressions {
		errs = append(errs, validateNodeSelectorRequirement(&term.MatchExpressions[i], fldPath.Child("matchExpressions").Index(i))...)
	}
	for i := range term.MatchFields {
		errs = append(errs, validateNodeFieldRequirement(&term.MatchFields[i], fldPath.Child("matchFields").Index(i))...)
	}
	return errs
}

// validateNodeFieldRequirement checks a field requirement as Kubernetes (and so KubeVirt) does:
// only metadata.name, with In or NotIn and exactly one value.
func validateNodeFieldRequirement(r *v1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Key != "metadata.name" {
		errs = append(errs, field.NotSupported(fldPath.Child("key"), r.Key, []string{"metadata.name"}))
	}
	if r.Operator != v1.NodeSelectorOpIn && r.Operator != v1.NodeSelectorOpNotIn {
		errs = append(errs, field.NotSupported(fldPath.Child("operator"), r.Operator, []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn}))
	}
	if len(r.Values) != 1 {
		errs = append(errs, field.Required(fldPath.Child("values"), "a field requirement takes exactly one value"))
	}
	return errs
}

// validateNodeSelectorRequirement checks that the values of a requirement suit its operator.
func validateNodeSelectorRequirement(r *v1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	errs := validateQualifiedName(r.Key, fldPath.Child("key"))
	valuesPath := fldPath.Child("values")
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(valuesPath, "operators In and NotIn need at least one value"))
		}
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(valuesPath, "operators Exists and DoesNotExist take no values"))
		}
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(valuesPath, "operators Gt and Lt need exactly one value"))
		} else if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			errs = append(errs, field.Invalid(valuesPath.Index(0), r.Values[0],
				"operators Gt and Lt need an integer value"))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("operator"), r.Operator, nodeSelectorOperators))
	}
	return errs
}

// validatePodAffinityTerms checks required and preferred pod (anti-)affinity terms.
func validatePodAffinityTerms(required []v1.PodAffinityTerm, preferred []v1.WeightedPodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range required {
		errs = append(errs, validatePodAffinityTerm(&required[i],
			fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i := range preferred {
		pPath := fldPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, validateWeight(preferred[i].Weight, pPath.Child("weight"))...)
		errs = append(errs, validatePodAffinityTerm(&preferred[i].PodAffinityTerm, pPath.Child("podAffinityTerm"))...)
	}
	return errs
}

// validatePodAffinityTerm checks a term's topology key and selectors.
func validatePodAffinityTerm(term *v1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if term.TopologyKey == "" {
		errs = append(errs, field.Required(fldPath.Child("topologyKey"),
			"a topology key such as kubernetes.io/hostname is required"))
	} else {
		errs = append(errs, validateQualifiedName(term.TopologyKey, fldPath.Child("topologyKey"))...)
	}
	for i, ns := range term.Namespaces {
		errs = append(errs, messagesToError(validation.IsDNS1123Label(ns), ns, fldPath.Child("namespaces").Index(i))...)
	}
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs = append(errs, metav1validation.ValidateLabelSelector(term.LabelSelector, opts, fldPath.Child("labelSelector"))...)
	return append(errs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
}

// validateWeight checks a scheduling preference weight.
func validateWeight(weight int32, fldPath *field.Path) field.ErrorList {
	if weight < 1 || weight > 100 {
		return field.ErrorList{field.Invalid(fldPath, weight, "must be from 1 to 100")}
	}
	return nil
}
