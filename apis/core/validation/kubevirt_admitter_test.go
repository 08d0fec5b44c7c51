package validation

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// These tests compare Vireo's VMI validation with KubeVirt's VMI create admitter
// (pkg/virt-api/webhooks/validating-webhook/admitters/vmi-create-admitter.go and the network and
// storage admitters it calls), rule by rule. Every function the admitter runs is accounted for
// in kubevirtAdmitterFunctions, and each of its rules is in exactly one of three lists:
//
//   - the admitterRules tables (kubevirt_admitter_rules_test.go, kubevirt_admitter_dns_test.go):
//     rules Vireo implements, each with an input KubeVirt refuses and the closest input it
//     accepts, checked against Vireo;
//   - notImplemented: rules Vireo does not implement, with the reason;
//   - differences: rules where Vireo and KubeVirt disagree, each with an input on which they do.
//
// Rules are named after KubeVirt's function, with the check in parentheses when the function
// makes several, such as "validateVolumes (unique names)", so a function Vireo implements in
// part appears in several lists, one check in each. Functions of other packages carry the name
// the admitter imports them by (netadmitter, storageadmitters, webhooks, ...). The rules were
// read from KubeVirt at commit d923fdb815cd.

// mutation changes a valid VMI.
type mutation func(vmi *v1.VirtualMachineInstance)

// admitterRule is a rule of KubeVirt's admitter that Vireo implements.
type admitterRule struct {
	fn   string // KubeVirt's function
	rule string // which of its checks, when it makes several
	// field is the field KubeVirt's cause names. vireoField, when set, is where Vireo reports the
	// same mistake instead, because KubeVirt's path is malformed or blames another field (note
	// says which).
	field, vireoField, note string
	// refuse is refused by KubeVirt by this rule; accept is the closest input KubeVirt accepts.
	refuse, accept mutation
	// validate replaces ValidateVirtualMachineInstance, for rules Vireo checks elsewhere.
	validate func(vmi *v1.VirtualMachineInstance) field.ErrorList
}

// name is the rule's name: its function, and the check in parentheses.
func (r admitterRule) name() string { return ruleName(r.fn, r.rule) }

func ruleName(fn, rule string) string {
	if rule == "" {
		return fn
	}
	return fn + " (" + rule + ")"
}

// admitterRules are all the rules compared.
func admitterRules() []admitterRule {
	var all []admitterRule
	for _, rules := range [][]admitterRule{resourceRules, domainRules, schedulingRules, networkRules, diskRules, volumeRules, credentialRules, dnsVideoAndSpreadRules} {
		all = append(all, rules...)
	}
	return all
}

// validateAsUser validates a VMI created by a user who is not one of Vireo's components, as the
// VMI registry does: the VMI, and no reserved labels.
func validateAsUser(vmi *v1.VirtualMachineInstance) field.ErrorList {
	errs := ValidateVirtualMachineInstance(vmi)
	return append(errs, ValidateReservedLabels(vmi.Labels, nil, field.NewPath("metadata", "labels"))...)
}

// vireoVerdict validates validVMI changed by m as the rule says.
func vireoVerdict(validate func(*v1.VirtualMachineInstance) field.ErrorList, m mutation) field.ErrorList {
	if validate == nil {
		validate = ValidateVirtualMachineInstance
	}
	vmi := validVMI()
	m(vmi)
	return validate(vmi)
}

// underField reports whether an error at got is at want or below it.
func underField(got, want string) bool {
	rest, ok := strings.CutPrefix(got, want)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// anyUnder reports whether one of errs is at field or below it.
func anyUnder(errs field.ErrorList, field string) bool {
	for _, e := range errs {
		if underField(e.Field, field) {
			return true
		}
	}
	return false
}

// compareRule returns how Vireo disagrees with KubeVirt on r: it must refuse r.refuse with an
// error at the rule's field (or below it) and accept r.accept.
func compareRule(r admitterRule) []string {
	want := r.field
	if r.vireoField != "" {
		want = r.vireoField
	}
	if want == "" {
		return []string{"the rule names no field to check Vireo's error against"}
	}
	var problems []string
	if errs := vireoVerdict(r.validate, r.refuse); !anyUnder(errs, want) {
		problems = append(problems, fmt.Sprintf("Vireo does not refuse what KubeVirt refuses with an error at %s; its errors: %v", want, errs))
	}
	if errs := vireoVerdict(r.validate, r.accept); len(errs) > 0 {
		problems = append(problems, fmt.Sprintf("Vireo refuses what KubeVirt accepts: %v", errs))
	}
	return problems
}

func TestKubeVirtAdmitterRules(t *testing.T) {
	for _, r := range admitterRules() {
		t.Run(r.name(), func(t *testing.T) {
			for _, p := range compareRule(r) {
				t.Error(p)
			}
		})
	}
}

// admitterDifference is a rule on which Vireo and KubeVirt disagree, with an input they judge
// differently.
type admitterDifference struct {
	name string
	why  string // what KubeVirt does; what Vireo does
	// input is refused by KubeVirt when kubevirtRefuses (and accepted by Vireo), else accepted by
	// KubeVirt (and refused by Vireo with an error at vireoField).
	input           mutation
	kubevirtRefuses bool
	vireoField      string
}

// TestKubeVirtAdmitterDifferences checks that each difference still holds, so that one fixed in
// Vireo is moved to the compared rules.
func TestKubeVirtAdmitterDifferences(t *testing.T) {
	for _, d := range differences {
		t.Run(d.name, func(t *testing.T) {
			errs := vireoVerdict(nil, d.input)
			switch {
			case d.kubevirtRefuses && len(errs) > 0:
				t.Errorf("Vireo now refuses this input as KubeVirt does (%v): move the rule to the compared rules", errs)
			case !d.kubevirtRefuses && !anyUnder(errs, d.vireoField):
				t.Errorf("Vireo no longer refuses this input at %s (errors: %v): move the rule to the compared rules", d.vireoField, errs)
			}
		})
	}
}

// TestKubeVirtAdmitterListsAccountForEveryFunction checks that every function of KubeVirt's
// admitter is named by some rule, that every rule names one of them, and that no rule is
// listed twice.
func TestKubeVirtAdmitterListsAccountForEveryFunction(t *testing.T) {
	known := map[string]bool{}
	for _, fn := range kubevirtAdmitterFunctions {
		known[fn] = true
	}
	seen, named := map[string]string{}, map[string]bool{}
	add := func(name, list string) {
		if other, dup := seen[name]; dup {
			t.Errorf("%q is listed in %s and in %s", name, other, list)
		}
		seen[name] = list
		fn, _, _ := strings.Cut(name, " (")
		if !known[fn] {
			t.Errorf("%s names %q, which is not a function of KubeVirt's admitter in kubevirtAdmitterFunctions", list, fn)
		}
		named[fn] = true
	}
	for _, r := range admitterRules() {
		add(r.name(), "the compared rules")
	}
	for _, n := range notImplemented {
		add(n.name, "notImplemented")
	}
	for _, d := range differences {
		add(d.name, "differences")
	}
	for _, fn := range kubevirtAdmitterFunctions {
		if !named[fn] {
			t.Errorf("no rule accounts for KubeVirt's %s", fn)
		}
	}
}

// kubevirtAdmitterFunctions are the functions that hold the rules of KubeVirt's VMI create
// admitter: those called by Admit, ValidateVirtualMachineInstanceSpec, validateDomainSpec and
// validateVolumes, with the functions that only call others (validateCpuPinning, the network
// Validator, storageadmitters.Validate and ValidateDisks, validateFirmware,
// ValidateVirtualMachineInstanceHyperv, the per-architecture settings) replaced by their callees.
var kubevirtAdmitterFunctions = []string{
	// Admit
	"webhookutils.ValidateSchema", "featuregate.ValidateFeatureGates", "netadmitter.validateDiscontinuedBindings",
	"validateVirtualMachineInstanceSpecVolumeDisks", "ValidateVirtualMachineInstanceMandatoryFields",
	"ValidateVirtualMachineInstanceMetadata", "validateGraceIOVirtualizationAnnotations",
	"webhooks.ValidateVirtualMachineInstanceHypervFeatureDependencies", "webhooks.ValidateVirtualMachineInstanceHypervMode",
	"ValidateVirtualMachineInstancePerArch", "webhooks.validateWatchdogAmd64", "webhooks.validateVideoTypeAmd64",
	"webhooks.ValidateVirtualMachineInstanceArm64Setting", "webhooks.ValidateVirtualMachineInstanceS390XSetting",
	// ValidateVirtualMachineInstanceSpec
	"validateHostNameNotConformingToDNSLabelRules", "validateSubdomainDNSSubdomainRules",
	"validateMemoryRequestsNegativeOrNull", "validateMemoryLimitsNegativeOrNull", "validateHugepagesMemoryRequests",
	"validateGuestMemoryLimit", "validateEmulatedMachine", "validateFirmwareACPI", "validateCPURequestNotNegative",
	"validateCPULimitNotNegative", "validateCpuRequestDoesNotExceedLimit",
	"validateMemoryIsProvided", "validateCPURequestIsInteger", "validateCPULimitIsInteger", "validateMemoryRequestsAndLimits",
	"validateRequestLimitOrCoresProvidedOnDedicatedCPUPlacement", "validateRequestEqualsLimitOnDedicatedCPUPlacement",
	"validateRequestOrLimitWithCoresProvidedOnDedicatedCPUPlacement", "validateThreadCountOnArchitecture",
	"validateThreadCountOnDedicatedCPUPlacement",
	"validateNUMA", "validateCPUIsolatorThread", "validateCPUFeaturePolicies", "validateCPUHotplug", "validateStartStrategy",
	"validateRealtime", "validateSpecAffinity", "validateSpecTopologySpreadConstraints",
	"netadmitter.validateSinglePodNetwork", "netadmitter.validateSingleNetworkSource", "netadmitter.validateMultusNetworkSource",
	"netadmitter.validateInterfaceStateValue", "netadmitter.validateInterfaceBindingExists", "netadmitter.validateMasqueradeBinding",
	"netadmitter.validateBridgeBinding", "netadmitter.validatePasstBinding", "netadmitter.validateNetworkNameUnique",
	"netadmitter.validateNetworkDevicesWithDRA", "netadmitter.validateNetworksAssignedToInterfaces",
	"netadmitter.validateInterfaceNameUnique", "netadmitter.validateInterfacesAssignedToNetworks",
	"netadmitter.validateInterfaceNameFormat", "netadmitter.validateInterfaceModel", "netadmitter.validateMacAddress",
	"netadmitter.validatePciAddress", "netadmitter.validateForwardPortsName", "netadmitter.validateForwardPortNonZero",
	"netadmitter.validateForwardPortInRange", "netadmitter.validateForwardPortProtocol",
	"netadmitter.validatePortRangesConfiguration", "netadmitter.validateDHCPOptions",
	"draadmitter.ValidateCreation", "validateBootOrder", "validateInterfaceBootOrder", "validateInputDevices",
	"validateIOThreadsPolicy", "validateProbe", "appendStatusCauseForProbeNotAllowedWithNoPodNetworkPresent",
	"validateVolumes", "storageadmitters.ValidateContainerDisks", "storageadmitters.ValidateUtilityVolumesNotPresentOnCreation",
	"validateAccessCredentials", "validateDNSPolicy", "validatePodDNSConfig", "validateLiveMigration", "validateMDEVRamFB",
	"validateHostDevicesWithPassthroughEnabled", "validateGraceIOVirtualization", "validateSoundDevices",
	"validateLaunchSecurity", "validateVSOCK", "validatePersistentReservation", "validateDownwardMetrics",
	"validateFilesystemsWithVirtIOFSEnabled", "validateVideoConfig", "validatePanicDevices", "validateRebootPolicy",
	"validateReservedOverheadMemlock", "validateServiceAccountName",
	// validateDomainSpec
	"storageadmitters.validateDiskName", "storageadmitters.validateDeviceTarget", "storageadmitters.validatePciAddress",
	"storageadmitters.validateBootOrderValue", "storageadmitters.validateBusSupport", "storageadmitters.validateSerialNumValue",
	"storageadmitters.validateSerialNumLength", "storageadmitters.validateCacheMode", "storageadmitters.validateIOMode",
	"storageadmitters.validateErrorPolicy", "storageadmitters.validateDiskNameAsContainerName", "storageadmitters.validateBlockSize",
	"validateBootloader", "validateKernelBoot", "validateDomainSpec",
}

// notImplemented are the rules of KubeVirt's admitter that Vireo's validation does not implement,
// each with why. "Unsupported" means Vireo accepts the field and fails the VMI with reason
// Unsupported when it would start (controllers/vmi/unsupported.go); Vireo has no feature gates.
var notImplemented = []struct{ name, why string }{
	{"webhookutils.ValidateSchema (types and required keys)", "KubeVirt checks the raw JSON against its OpenAPI schema; Vireo's apiserver decodes into typed structs, so a wrong type fails decoding and a missing key is an empty value, whose rules are compared"},
	{"featuregate.ValidateFeatureGates", "refuses specs using discontinued feature gates enabled in the cluster configuration; Vireo has no feature gates"},
	{"netadmitter.validateDiscontinuedBindings", "slirp, passt and macvtap bindings are Unsupported"},
	{"validateVirtualMachineInstanceSpecVolumeDisks (containerPath volumes)", "containerPath volumes are Unsupported"},
	{"ValidateVirtualMachineInstanceMetadata (ignition and sidecar annotations)", "behind feature gates; Vireo neither reads the ignition annotation nor runs hook sidecars"},
	{"validateGraceIOVirtualizationAnnotations", "about NVIDIA Grace GPU passthrough: host devices and GPUs are Unsupported"},
	{"webhooks.ValidateVirtualMachineInstanceHypervFeatureDependencies (evmcs needs vapic and vmx)", "Hyper-V is Unsupported; Vireo checks only the synic, synictimer, tlbflush and ipi dependencies"},
	{"webhooks.ValidateVirtualMachineInstanceHypervMode", "hyperv and hypervPassthrough are both Unsupported"},
	{"ValidateVirtualMachineInstancePerArch", "Vireo runs amd64 only: its launcher refuses any other architecture when it builds the domain"},
	{"webhooks.validateWatchdogAmd64", "watchdogs are Unsupported"},
	{"webhooks.ValidateVirtualMachineInstanceArm64Setting", "arm64 guests: Vireo runs amd64 only"},
	{"webhooks.ValidateVirtualMachineInstanceS390XSetting", "s390x guests: Vireo runs amd64 only"},
	{"validateHugepagesMemoryRequests", "hugepages are Unsupported"},
	{"validateFirmwareACPI", "firmware.acpi (SLIC and MSDM tables) is Unsupported"},
	{"validateThreadCountOnArchitecture", "about arm64 guests: Vireo runs amd64 only"},
	{"validateNUMA", "NUMA is Unsupported (and behind KubeVirt's NUMA feature gate)"},
	{"validateCPUFeaturePolicies", "cpu.features are Unsupported"},
	{"validateCPUHotplug", "cpu.maxSockets (CPU hotplug) is Unsupported"},
	{"validateRealtime", "cpu.realtime is Unsupported"},
	{"netadmitter.validateSinglePodNetwork (one default Multus network)", "Multus networks are Unsupported"},
	{"netadmitter.validateMultusNetworkSource", "Multus networks are Unsupported"},
	{"netadmitter.validateInterfaceStateValue", "interface states other than up are Unsupported"},
	{"netadmitter.validateMasqueradeBinding (pod network only)", "only reachable with a Multus or resourceClaim network, which are Unsupported"},
	{"netadmitter.validateBridgeBinding", "the bridge binding is Unsupported; the rule depends on the cluster's permitBridgeInterfaceOnPodNetwork"},
	{"netadmitter.validatePasstBinding", "the passtBinding binding is Unsupported (and behind a feature gate)"},
	{"netadmitter.validateNetworkDevicesWithDRA", "resourceClaim networks are Unsupported (and behind a feature gate)"},
	{"netadmitter.validatePciAddress", "interface pciAddress is Unsupported"},
	{"netadmitter.validatePortRangesConfiguration", "portRanges are Unsupported (and behind a feature gate)"},
	{"netadmitter.validateDHCPOptions", "dhcpOptions are Unsupported"},
	{"draadmitter.ValidateCreation", "resource claims and DRA GPUs and host devices are Unsupported (and behind feature gates)"},
	{"validateBootOrder (downwardMetrics volume on a virtio disk)", "downwardMetrics volumes are Unsupported"},
	{"validateInputDevices", "input devices are Unsupported"},
	{"validateIOThreadsPolicy", "ioThreadsPolicy and ioThreads are Unsupported"},
	{"storageadmitters.validatePciAddress", "disk pciAddress is Unsupported"},
	{"storageadmitters.validateBusSupport (dedicatedIOThread needs virtio)", "dedicatedIOThread is Unsupported"},
	{"storageadmitters.validateIOMode", "disk io is Unsupported"},
	{"storageadmitters.validateErrorPolicy", "disk errorPolicy is Unsupported"},
	{"storageadmitters.validateBlockSize", "disk blockSize is Unsupported"},
	{"storageadmitters.ValidateUtilityVolumesNotPresentOnCreation", "utilityVolumes are Unsupported"},
	{"validateVolumes (hostDisk feature gate)", "Vireo has no feature gates; hostDisk volumes are Unsupported (their fields are compared)"},
	{"validateVolumes (downwardMetrics volumes: feature gate, at most one)", "downwardMetrics volumes are Unsupported"},
	{"validateVolumes (at most one memoryDump volume)", "memoryDump volumes are Unsupported"},
	{"validateMDEVRamFB", "GPUs are Unsupported"},
	{"validateHostDevicesWithPassthroughEnabled", "host devices are Unsupported (and behind a feature gate)"},
	{"validateGraceIOVirtualization", "host devices and GPUs are Unsupported (and behind feature gates)"},
	{"validateSoundDevices", "sound devices are Unsupported"},
	{"validateLaunchSecurity", "launchSecurity is Unsupported (and behind feature gates)"},
	{"validateVSOCK", "autoattachVSOCK is Unsupported (and behind a feature gate)"},
	{"validatePersistentReservation", "LUNs are Unsupported; reservation is behind a feature gate"},
	{"validateDownwardMetrics", "the downwardMetrics device is Unsupported (and behind a feature gate)"},
	{"validateFilesystemsWithVirtIOFSEnabled", "filesystems are Unsupported (and behind a feature gate)"},
	{"validatePanicDevices", "panic devices are Unsupported"},
	{"validateRebootPolicy", "behind the RebootPolicy feature gate, which Vireo lacks: Reboot (what a guest does anyway) is accepted, Terminate is Unsupported"},
	{"validateReservedOverheadMemlock", "memory.reservedOverhead is Unsupported (and behind a feature gate)"},
	{"validateServiceAccountName", "spec.serviceAccountName is Unsupported"},
}

// differences are the rules on which Vireo and KubeVirt disagree. Vireo's code is left as it is;
// each is for the maintainers to decide.
var differences = []admitterDifference{
	{name: "validateGuestMemoryLimit",
		why:   "KubeVirt checks memory.guest <= limits.memory only when vmRolloutStrategy is Stage, so by default (LiveUpdate) it accepts guest memory above the limit; Vireo always refuses it",
		input: both(memRes("128Mi", "200Mi"), sp(func(s *vmiSpec) { s.Domain.Memory.Guest = qp("256Mi") })), vireoField: "spec.domain.memory.guest"},
	{name: "webhookutils.ValidateSchema (containerDisk image: \"\")",
		why:   "KubeVirt's schema only requires the image key, so an explicit empty image is admitted (and fails when pulled); Vireo refuses it",
		input: volume0(containerDisk("")), vireoField: "spec.volumes[0].containerDisk.image"},
	{name: "validateVolumes (cloud-init secretRef with an empty name)",
		why:   "KubeVirt does not count a secretRef with an empty name as a user-data source, so userData plus secretRef: {name: \"\"} is admitted; Vireo refuses it as two sources and an empty Secret name",
		input: sp(func(s *vmiSpec) { s.Volumes[1].CloudInitNoCloud.UserDataSecretRef = &v1.LocalObjectReference{} }), vireoField: "spec.volumes[1].cloudInitNoCloud"},
}

// Helpers of the access credential and Hyper-V rules.

func credential(ac v1.AccessCredential) mutation {
	return sp(func(s *vmiSpec) { s.AccessCredentials = []v1.AccessCredential{ac} })
}

func secret(name string) *v1.AccessCredentialSecretSource {
	return &v1.AccessCredentialSecretSource{SecretName: name}
}

func sshKey(src *v1.AccessCredentialSecretSource, m v1.SSHPublicKeyAccessCredentialPropagationMethod) v1.AccessCredential {
	return v1.AccessCredential{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{
		Source: v1.SSHPublicKeyAccessCredentialSource{Secret: src}, PropagationMethod: m}}
}

func agentUsers(users ...string) v1.SSHPublicKeyAccessCredentialPropagationMethod {
	return v1.SSHPublicKeyAccessCredentialPropagationMethod{
		QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: users}}
}

func password(src *v1.AccessCredentialSecretSource, agent bool) v1.AccessCredential {
	p := &v1.UserPasswordAccessCredential{Source: v1.UserPasswordAccessCredentialSource{Secret: src}}
	if agent {
		p.PropagationMethod.QemuGuestAgent = &v1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}
	}
	return v1.AccessCredential{UserPassword: p}
}

func fs(enabled bool) *v1.FeatureState { return &v1.FeatureState{Enabled: &enabled} }

// hypervRule compares a Hyper-V dependency: set turns feature on and gives the feature it
// needs the state passed (off to refuse, on to accept, as KubeVirt's defaults turn on a
// needed feature left out).
func hypervRule(feature, needs string, set func(h *v1.FeatureHyperv, needed *v1.FeatureState)) admitterRule {
	with := func(needed *v1.FeatureState) mutation {
		return sp(func(s *vmiSpec) {
			h := &v1.FeatureHyperv{}
			set(h, needed)
			s.Domain.Features = &v1.Features{Hyperv: h}
		})
	}
	return admitterRule{fn: "webhooks.ValidateVirtualMachineInstanceHypervFeatureDependencies", rule: feature + " needs " + needs,
		field:      "spec.domain.features.hyperv.domain.features.hyperv." + feature,
		vireoField: "spec.domain.features.hyperv." + feature, note: "KubeVirt's path repeats domain.features.hyperv",
		refuse: with(fs(false)), accept: with(fs(true))}
}
