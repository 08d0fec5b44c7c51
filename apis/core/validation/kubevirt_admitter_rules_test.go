package validation

import (
	"encoding/base64"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// The rules of KubeVirt's VMI create admitter that Vireo's validation implements, each with an
// input KubeVirt refuses by that rule and the closest input it accepts. Inputs are changes of
// validVMI, which is already defaulted as KubeVirt's mutating webhook would (topology, guest
// memory, disk buses, machine type), because the admitter only ever sees defaulted VMIs.

// resourceRules are the memory and CPU rules, dedicated CPU placement included.
var resourceRules = []admitterRule{
	{fn: "validateMemoryRequestsNegativeOrNull", rule: "not negative", field: "spec.domain.resources.requests.memory",
		refuse: memRes("-1Mi", ""), accept: memRes("0", "")},
	{fn: "validateMemoryRequestsNegativeOrNull", rule: "at least 1M", field: "spec.domain.resources.requests.memory",
		refuse: memRes("999999", ""), accept: memRes("1M", "")},
	{fn: "validateMemoryLimitsNegativeOrNull", rule: "not negative", field: "spec.domain.resources.limits.memory",
		refuse: memRes("128Mi", "-1Mi"), accept: memRes("128Mi", "0")},
	{fn: "validateMemoryLimitsNegativeOrNull", rule: "request not above limit", field: "spec.domain.resources.requests.memory",
		refuse: memRes("256Mi", "200Mi"), accept: memRes("200Mi", "200Mi")},
	{fn: "ValidateVirtualMachineInstanceMandatoryFields", field: "", vireoField: "spec.domain.resources.requests.memory",
		note:   "KubeVirt's cause names no field",
		refuse: noMemory,
		accept: memRes("", "")},
	{fn: "validateCPURequestNotNegative", field: "spec.domain.resources.requests.cpu",
		refuse: cpuRes("-1", ""), accept: cpuRes("0", "")},
	{fn: "validateCPULimitNotNegative", field: "spec.domain.resources.limits.cpu",
		refuse: cpuRes("1", "-1"), accept: cpuRes("1", "0")},
	{fn: "validateCpuRequestDoesNotExceedLimit", field: "spec.domain.resources.requests.cpu",
		refuse: cpuRes("2", "1"), accept: cpuRes("1", "1")},
	{fn: "validateCPUIsolatorThread", field: "spec.domain.cpu.isolateEmulatorThread",
		refuse: sp(func(s *vmiSpec) { s.Domain.CPU.IsolateEmulatorThread = true }),
		accept: sp(func(s *vmiSpec) { s.Domain.CPU.IsolateEmulatorThread, s.Domain.CPU.DedicatedCPUPlacement = true, true })},
	{fn: "validateMemoryIsProvided", field: "spec.domain.resources.limits.memory", vireoField: "spec.domain.resources.requests.memory",
		note:   "Vireo reports missing memory where it does for every VMI",
		refuse: both(dedicated("1", "", 1, 1, 1), noMemory),
		accept: both(dedicated("1", "", 1, 1, 1), memRes("", ""))},
	{fn: "validateCPURequestIsInteger", field: "spec.domain.resources.requests.cpu",
		refuse: dedicated("1500m", "", 1, 2, 1), accept: dedicated("2", "", 1, 2, 1)},
	{fn: "validateCPULimitIsInteger", field: "spec.domain.resources.limits.cpu",
		note:   "the defaults copy a lone CPU limit to the request, so both are fractional",
		refuse: dedicated("1500m", "1500m", 1, 2, 1), accept: dedicated("2", "2", 1, 2, 1)},
	{fn: "validateMemoryRequestsAndLimits", field: "spec.domain.resources.requests.memory",
		refuse: both(dedicated("1", "", 1, 1, 1), memRes("128Mi", "256Mi")),
		accept: both(dedicated("1", "", 1, 1, 1), memRes("128Mi", "128Mi"))},
	{fn: "validateRequestLimitOrCoresProvidedOnDedicatedCPUPlacement", field: "spec.domain.cpu.dedicatedCpuPlacement",
		note:   "unreachable after KubeVirt's defaults, which always give a topology",
		refuse: dedicated("", "", 0, 0, 0), accept: dedicated("", "", 0, 1, 0)},
	{fn: "validateRequestEqualsLimitOnDedicatedCPUPlacement", field: "spec.domain.cpu.dedicatedCpuPlacement",
		refuse: dedicated("1", "2", 1, 2, 1), accept: dedicated("2", "2", 1, 2, 1)},
	{fn: "validateRequestOrLimitWithCoresProvidedOnDedicatedCPUPlacement", field: "spec.domain.cpu.dedicatedCpuPlacement",
		refuse: dedicated("2", "", 1, 1, 1), accept: dedicated("1", "", 1, 1, 1)},
	{fn: "validateThreadCountOnDedicatedCPUPlacement", field: "spec.domain.cpu.dedicatedCpuPlacement",
		refuse: dedicated("3", "", 1, 1, 3), accept: dedicated("2", "", 1, 1, 2)},
}

// domainRules are the machine, firmware and start-up rules.
var domainRules = []admitterRule{
	{fn: "validateEmulatedMachine", field: "spec.domain.machine.type",
		refuse: machine("pc-i440fx-9.0"), accept: machine("pc-q35-9.0")},
	{fn: "validateBootloader", field: "spec.domain.firmware.bootloader",
		refuse: bootloader(&v1.BIOS{}, &v1.EFI{SecureBoot: ptr.To(false)}), accept: bootloader(nil, &v1.EFI{SecureBoot: ptr.To(false)})},
	{fn: "validateKernelBoot", rule: "kernelArgs need a container", field: "spec.domain.firmware.kernelBoot.kernelArgs",
		refuse: kernelBoot("console=ttyS0", nil), accept: kernelBoot("console=ttyS0", &v1.KernelBootContainer{Image: "kernels:6", KernelPath: "/boot/vmlinuz"})},
	{fn: "validateKernelBoot", rule: "image required", field: "spec.domain.firmware.kernelBoot.container.image",
		refuse: kernelBoot("", &v1.KernelBootContainer{KernelPath: "/boot/vmlinuz"}), accept: kernelBoot("", &v1.KernelBootContainer{Image: "kernels:6", KernelPath: "/boot/vmlinuz"})},
	{fn: "validateKernelBoot", rule: "kernel or initrd path required", field: "spec.domain.firmware.kernelBoot.container",
		refuse: kernelBoot("", &v1.KernelBootContainer{Image: "kernels:6"}), accept: kernelBoot("", &v1.KernelBootContainer{Image: "kernels:6", InitrdPath: "/boot/initrd"})},
	{fn: "validateKernelBoot", rule: "absolute clean paths", field: "spec.domain.firmware.kernelBoot.container.kernelPath",
		refuse: kernelBoot("", &v1.KernelBootContainer{Image: "kernels:6", KernelPath: "boot/vmlinuz"}), accept: kernelBoot("", &v1.KernelBootContainer{Image: "kernels:6", KernelPath: "/boot/vmlinuz"})},
	{fn: "validateDomainSpec", rule: "secure boot needs SMM", field: "spec.domain",
		refuse: bootloader(nil, &v1.EFI{}),
		accept: both(bootloader(nil, &v1.EFI{}), sp(func(s *vmiSpec) { s.Domain.Features = &v1.Features{SMM: &v1.FeatureState{Enabled: ptr.To(true)}} }))},
	{fn: "validateHostNameNotConformingToDNSLabelRules", field: "spec.hostname",
		refuse: sp(func(s *vmiSpec) { s.Hostname = "vm.example" }), accept: sp(func(s *vmiSpec) { s.Hostname = "vm-example" })},
	{fn: "validateSubdomainDNSSubdomainRules", field: "spec.subdomain",
		refuse: sp(func(s *vmiSpec) { s.Subdomain = "Sub_Domain" }), accept: sp(func(s *vmiSpec) { s.Subdomain = "sub.domain" })},
	{fn: "validateStartStrategy", rule: "known value", field: "spec.startStrategy",
		refuse: startStrategy("Running", false), accept: startStrategy(v1.StartStrategyPaused, false)},
	{fn: "validateStartStrategy", rule: "no liveness probe when paused", field: "spec.startStrategy", vireoField: "spec.livenessProbe",
		note:   "Vireo blames the probe, KubeVirt the start strategy",
		refuse: startStrategy(v1.StartStrategyPaused, true), accept: startStrategy("", true)},
	{fn: "validateLiveMigration", field: "spec.evictionStrategy",
		refuse: sp(func(s *vmiSpec) { s.EvictionStrategy = ptr.To(v1.EvictionStrategy("Migrate")) }),
		accept: sp(func(s *vmiSpec) { s.EvictionStrategy = ptr.To(v1.EvictionStrategyLiveMigrate) })},
	{fn: "validateDNSPolicy", field: "spec.dnsPolicy",
		refuse: dns("ClusterLast", nil), accept: dns("Default", nil)},
	{fn: "validatePodDNSConfig", rule: "None needs dnsConfig", field: "spec.dnsConfig",
		refuse: dns("None", nil), accept: dns("None", &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}})},
	{fn: "validatePodDNSConfig", rule: "None needs a nameserver", field: "nameservers", vireoField: "spec.dnsConfig.nameservers",
		note:   "KubeVirt's cause names a bare 'nameservers'",
		refuse: dns("None", &v1.PodDNSConfig{Searches: []string{"example.com"}}),
		accept: dns("None", &v1.PodDNSConfig{Searches: []string{"example.com"}, Nameservers: []string{"1.1.1.1"}})},
	{fn: "validatePodDNSConfig", rule: "at most 3 nameservers", field: "nameservers", vireoField: "spec.dnsConfig.nameservers",
		note:   "KubeVirt's cause names a bare 'nameservers'",
		refuse: dns("", &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "1.0.0.1", "8.8.8.8", "8.8.4.4"}}),
		accept: dns("", &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "1.0.0.1", "8.8.8.8"}})},
	{fn: "validatePodDNSConfig", rule: "nameservers are IP addresses", field: "nameservers", vireoField: "spec.dnsConfig.nameservers",
		note:   "KubeVirt's cause names a bare 'nameservers'",
		refuse: dns("", &v1.PodDNSConfig{Nameservers: []string{"dns.example.com"}}),
		accept: dns("", &v1.PodDNSConfig{Nameservers: []string{"2606:4700:4700::1111"}})},
	{fn: "ValidateVirtualMachineInstanceMetadata", rule: "reserved kubevirt.io labels", field: "metadata.labels",
		note:     "checked, as by KubeVirt, for users that are not the platform's own components",
		validate: validateAsUser,
		refuse:   withLabel(v1.CreatedByLabel, "someone"), accept: withLabel("app", "web")},
}

// schedulingRules are the affinity and topology spread rules (copied by KubeVirt from
// Kubernetes), whose paths in KubeVirt lack "affinity".
var schedulingRules = []admitterRule{
	{fn: "validateSpecAffinity", rule: "node selector terms required", field: "spec.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
		vireoField: "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", note: kvAffinityPath,
		refuse: nodeAffinity(nil), accept: nodeAffinity(&v1.NodeSelectorRequirement{Key: "kubernetes.io/hostname", Operator: "In", Values: []string{"n1"}})},
	{fn: "validateSpecAffinity", rule: "preference weight 1 to 100", field: "spec.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
		vireoField: "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", note: kvAffinityPath,
		refuse: preferredNode(0), accept: preferredNode(1)},
	nodeRequirementRule("In needs values", "values", v1.NodeSelectorRequirement{Key: "zone", Operator: "In"},
		v1.NodeSelectorRequirement{Key: "zone", Operator: "In", Values: []string{"a"}}),
	nodeRequirementRule("Exists takes no values", "values", v1.NodeSelectorRequirement{Key: "zone", Operator: "Exists", Values: []string{"a"}},
		v1.NodeSelectorRequirement{Key: "zone", Operator: "Exists"}),
	nodeRequirementRule("Gt needs one value", "values", v1.NodeSelectorRequirement{Key: "cores", Operator: "Gt", Values: []string{"4", "8"}},
		v1.NodeSelectorRequirement{Key: "cores", Operator: "Gt", Values: []string{"4"}}),
	nodeRequirementRule("known operator", "operator", v1.NodeSelectorRequirement{Key: "zone", Operator: "Near", Values: []string{"a"}},
		v1.NodeSelectorRequirement{Key: "zone", Operator: "NotIn", Values: []string{"a"}}),
	nodeRequirementRule("key is a label name", "key", v1.NodeSelectorRequirement{Key: "bad key", Operator: "Exists"},
		v1.NodeSelectorRequirement{Key: "example.com/good-key", Operator: "Exists"}),
	{fn: "validateSpecAffinity", rule: "pod affinity topologyKey required", field: "spec.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
		vireoField: "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey", note: kvAffinityPath,
		refuse: podAffinity(v1.PodAffinityTerm{}), accept: podAffinity(v1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"})},
	{fn: "validateSpecAffinity", rule: "pod affinity label selector", field: "spec.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector",
		vireoField: "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector", note: kvAffinityPath,
		refuse: podAffinity(podTerm("Near", nil)), accept: podAffinity(podTerm("In", []string{"web"}))},
	{fn: "validateSpecAffinity", rule: "anti-affinity weight 1 to 100", field: "spec.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
		vireoField: "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", note: kvAffinityPath,
		refuse: antiAffinity(101), accept: antiAffinity(100)},
	{fn: "validateSpecTopologySpreadConstraints", rule: "maxSkew positive", field: "spec.topologySpreadConstraints[0].maxSkew",
		refuse: spread(0, "zone", "DoNotSchedule"), accept: spread(1, "zone", "DoNotSchedule")},
	{fn: "validateSpecTopologySpreadConstraints", rule: "topologyKey required", field: "spec.topologySpreadConstraints[0].topologyKey",
		refuse: spread(1, "", "DoNotSchedule"), accept: spread(1, "topology.kubernetes.io/zone", "DoNotSchedule")},
	{fn: "validateSpecTopologySpreadConstraints", rule: "whenUnsatisfiable known", field: "spec.topologySpreadConstraints[0].whenUnsatisfiable",
		refuse: spread(1, "zone", "Sometimes"), accept: spread(1, "zone", "ScheduleAnyway")},
}

// kvAffinityPath explains the affinity rules' paths.
const kvAffinityPath = "KubeVirt's path leaves out 'affinity'"

// networkRules are the rules of KubeVirt's network admitter (pkg/network/admitter).
var networkRules = []admitterRule{
	{fn: "netadmitter.validateSinglePodNetwork", rule: "one pod network", field: "spec.interfaces", vireoField: "spec.networks[1].pod",
		note:   "KubeVirt's cause names spec.interfaces, which does not exist",
		refuse: extraNetwork(v1.NetworkSource{Pod: &v1.PodNetwork{}}, bridged("second")),
		accept: extraNetwork(multus("net1"), bridged("second"))},
	{fn: "netadmitter.validateSingleNetworkSource", rule: "a source", field: "spec.networks[0]",
		refuse: network0(v1.NetworkSource{}), accept: network0(v1.NetworkSource{Pod: &v1.PodNetwork{}})},
	{fn: "netadmitter.validateSingleNetworkSource", rule: "one source", field: "spec.networks[0]",
		refuse: network0(v1.NetworkSource{Pod: &v1.PodNetwork{}, Multus: &v1.MultusNetwork{NetworkName: "net1"}}),
		accept: network0(v1.NetworkSource{Pod: &v1.PodNetwork{}})},
	{fn: "netadmitter.validateInterfaceBindingExists", rule: "a binding", field: "spec.domain.devices.interfaces[0]",
		refuse: iface0(func(i *v1.Interface) { i.Masquerade = nil }), accept: iface0(func(*v1.Interface) {})},
	{fn: "netadmitter.validateInterfaceBindingExists", rule: "one binding", field: "spec.domain.devices.interfaces[0]",
		refuse: iface0(func(i *v1.Interface) { i.Bridge = &v1.InterfaceBridge{} }), accept: iface0(func(*v1.Interface) {})},
	{fn: "netadmitter.validateMasqueradeBinding", rule: "reserved MAC address", field: "spec.domain.devices.interfaces[0].macAddress",
		refuse: mac("02:00:00:00:00:00"), accept: mac("02:00:00:00:00:01")},
	{fn: "netadmitter.validateNetworkNameUnique", field: "spec.networks[1].name",
		refuse: extraNetwork(multus("net1"), nil, "default"), accept: extraNetwork(multus("net1"), bridged("net1"))},
	{fn: "netadmitter.validateNetworksAssignedToInterfaces", field: "spec.networks[1].name",
		refuse: extraNetwork(multus("net1"), nil), accept: extraNetwork(multus("net1"), bridged("net1"))},
	{fn: "netadmitter.validateInterfaceNameUnique", field: "spec.domain.devices.interfaces[1].name",
		refuse: sp(func(s *vmiSpec) { s.Domain.Devices.Interfaces = append(s.Domain.Devices.Interfaces, masq("default")) }),
		accept: extraNetwork(multus("net1"), bridged("net1"))},
	{fn: "netadmitter.validateInterfacesAssignedToNetworks", field: "spec.domain.devices.interfaces[1].name",
		refuse: sp(func(s *vmiSpec) { s.Domain.Devices.Interfaces = append(s.Domain.Devices.Interfaces, *bridged("net1")) }),
		accept: extraNetwork(multus("net1"), bridged("net1"))},
	{fn: "netadmitter.validateInterfaceNameFormat", field: "spec.domain.devices.interfaces[0].name",
		refuse: setNetworkName("pod.net"), accept: setNetworkName("pod_net-1")},
	{fn: "netadmitter.validateInterfaceModel", field: "spec.domain.devices.interfaces[0].model",
		refuse: iface0(func(i *v1.Interface) { i.Model = "virtio-net-pci" }), accept: iface0(func(i *v1.Interface) { i.Model = "e1000e" })},
	{fn: "netadmitter.validateMacAddress", field: "spec.domain.devices.interfaces[0].macAddress",
		refuse: mac("02:00:00:00:00"), accept: mac("02-00-00-AB-CD-EF")},
	{fn: "netadmitter.validateForwardPortsName", rule: "unique", field: "spec.domain.devices.interfaces[0].ports[1].name",
		refuse: ports(v1.Port{Name: "http", Port: 80}, v1.Port{Name: "http", Port: 8080}),
		accept: ports(v1.Port{Name: "http", Port: 80}, v1.Port{Name: "http-alt", Port: 8080})},
	{fn: "netadmitter.validateForwardPortsName", rule: "IANA service name", field: "spec.domain.devices.interfaces[0].ports[0].name",
		refuse: ports(v1.Port{Name: "HTTP_PORT", Port: 80}), accept: ports(v1.Port{Name: "http", Port: 80})},
	{fn: "netadmitter.validateForwardPortNonZero", field: "spec.domain.devices.interfaces[0].ports[0].port",
		refuse: ports(v1.Port{Port: 0}), accept: ports(v1.Port{Port: 1})},
	{fn: "netadmitter.validateForwardPortInRange", field: "spec.domain.devices.interfaces[0].ports[0].port",
		refuse: ports(v1.Port{Port: 65536}), accept: ports(v1.Port{Port: 65535})},
	{fn: "netadmitter.validateForwardPortProtocol", field: "spec.domain.devices.interfaces[0].ports[0].protocol",
		refuse: ports(v1.Port{Port: 53, Protocol: "SCTP"}), accept: ports(v1.Port{Port: 53, Protocol: "UDP"})},
	{fn: "appendStatusCauseForProbeNotAllowedWithNoPodNetworkPresent", field: "spec.readinessProbe.tcpSocket",
		refuse: both(noNetworking, readiness(v1.Handler{TCPSocket: tcp22()})), accept: readiness(v1.Handler{TCPSocket: tcp22()})},
	{fn: "validateProbe", rule: "one handler", field: "spec.readinessProbe",
		refuse: readiness(v1.Handler{TCPSocket: tcp22(), Exec: &v1.ExecAction{Command: []string{"true"}}}),
		accept: readiness(v1.Handler{TCPSocket: tcp22()})},
	{fn: "validateProbe", rule: "a handler", field: "spec.livenessProbe",
		refuse: liveness(v1.Handler{}), accept: liveness(v1.Handler{GuestAgentPing: &v1.GuestAgentPing{}})},
}

// diskRules are the rules on disks and their boot order (validateBootOrder and KubeVirt's
// storage admitter, pkg/storage/admitters).
var diskRules = []admitterRule{
	{fn: "validateBootOrder", rule: "disk needs a volume", field: "spec.domain.devices.disks[2].name",
		refuse: addDisk("extra", virtioDisk, nil), accept: addDisk("extra", virtioDisk, emptyDisk())},
	{fn: "validateBootOrder", rule: "empty CD-ROM", field: "spec.domain.devices.disks[2].name",
		note:   "KubeVirt accepts an empty CD-ROM only with its DeclarativeHotplugVolumes feature gate",
		refuse: addDisk("cd", sataCDROM, nil), accept: addDisk("cd", sataCDROM, containerDisk("iso:1"))},
	{fn: "validateBootOrder", rule: "lun needs a claim", field: "spec.domain.devices.disks[0].lun",
		refuse: disk0(func(d *v1.Disk) { d.DiskDevice = v1.DiskDevice{LUN: &v1.LunTarget{Bus: v1.DiskBusSCSI}} }),
		accept: both(disk0(func(d *v1.Disk) { d.DiskDevice = v1.DiskDevice{LUN: &v1.LunTarget{Bus: v1.DiskBusSCSI}} }),
			volume0(&v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "root"}}))},
	{fn: "validateBootOrder", rule: "unique disk boot order", field: "spec.domain.devices.disks[1].bootOrder",
		refuse: bootOrders(1, 1, -1), accept: bootOrders(1, 2, -1)},
	{fn: "validateInterfaceBootOrder", rule: "at least 1", field: "spec[0].bootOrder", vireoField: "spec.domain.devices.interfaces[0].bootOrder",
		note:   "KubeVirt indexes spec itself",
		refuse: bootOrders(-1, -1, 0), accept: bootOrders(-1, -1, 1)},
	{fn: "validateInterfaceBootOrder", rule: "unique across devices", field: "spec.domain.devices.interfaces[0].bootOrder",
		refuse: bootOrders(1, -1, 1), accept: bootOrders(1, -1, 2)},
	{fn: "storageadmitters.validateDiskName", field: "spec.domain.devices.disks[2].name",
		refuse: sp(func(s *vmiSpec) { s.Domain.Devices.Disks = append(s.Domain.Devices.Disks, s.Domain.Devices.Disks[0]) }),
		accept: addDisk("extra", virtioDisk, emptyDisk())},
	{fn: "storageadmitters.validateDeviceTarget", field: "spec.domain.devices.disks[0]",
		refuse: disk0(func(d *v1.Disk) { d.CDRom = &v1.CDRomTarget{Bus: v1.DiskBusSATA} }), accept: disk0(func(d *v1.Disk) { d.DiskDevice = sataCDROM })},
	{fn: "storageadmitters.validateBootOrderValue", field: "spec.domain.devices.disks[0].bootOrder",
		refuse: bootOrders(0, -1, -1), accept: bootOrders(1, -1, -1)},
	{fn: "storageadmitters.validateBusSupport", rule: "no IDE", field: "spec.domain.devices.disks[0].disk.bus",
		refuse: diskBus("ide", false), accept: diskBus(v1.DiskBusSATA, false)},
	{fn: "storageadmitters.validateBusSupport", rule: "known bus", field: "spec.domain.devices.disks[0].disk.bus",
		refuse: diskBus("floppy", false), accept: diskBus(v1.DiskBusUSB, false)},
	{fn: "storageadmitters.validateBusSupport", rule: "no virtio CD-ROM", field: "spec.domain.devices.disks[0].cdrom.bus",
		refuse: disk0(func(d *v1.Disk) { d.DiskDevice = v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusVirtio}} }),
		accept: disk0(func(d *v1.Disk) { d.DiskDevice = v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSCSI}} })},
	{fn: "storageadmitters.validateBusSupport", rule: "no read-only SATA disk", field: "spec.domain.devices.disks[0].disk.bus",
		vireoField: "spec.domain.devices.disks[0].disk.readonly", note: "Vireo blames readonly, KubeVirt the bus",
		refuse: diskBus(v1.DiskBusSATA, true), accept: diskBus(v1.DiskBusVirtio, true)},
	{fn: "storageadmitters.validateSerialNumValue", field: "spec.domain.devices.disks[0].serial",
		refuse: disk0(func(d *v1.Disk) { d.Serial = "serial number" }), accept: disk0(func(d *v1.Disk) { d.Serial = "Serial-1.0_a+b" })},
	{fn: "storageadmitters.validateSerialNumLength", field: "spec.domain.devices.disks[0].serial",
		refuse: disk0(func(d *v1.Disk) { d.Serial = strings.Repeat("s", 257) }), accept: disk0(func(d *v1.Disk) { d.Serial = strings.Repeat("s", 256) })},
	{fn: "storageadmitters.validateCacheMode", field: "spec.domain.devices.disks[0].cache",
		refuse: disk0(func(d *v1.Disk) { d.Cache = "unsafe" }), accept: disk0(func(d *v1.Disk) { d.Cache = v1.CacheWriteBack })},
	{fn: "storageadmitters.validateDiskNameAsContainerName", field: "spec.domain.devices.disks.domain.devices.disks[0].name",
		vireoField: "spec.domain.devices.disks[0].name", note: "KubeVirt's path repeats domain.devices.disks",
		refuse: renameRoot("Root_Disk"), accept: renameRoot("root-disk")},
	{fn: "storageadmitters.ValidateContainerDisks", field: "spec.volumes[0].containerDisk",
		refuse: volume0(containerDiskAt("disk/disk.img")), accept: volume0(containerDiskAt("/disk/disk.img"))},
	{fn: "webhookutils.ValidateSchema", rule: "containerDisk image required", field: "", vireoField: "spec.volumes[0].containerDisk.image",
		note:   "KubeVirt's schema refuses a missing image key (its cause names no field); an explicit empty image is listed in differences",
		refuse: volume0(containerDisk("")), accept: volume0(containerDisk("quay.io/containerdisks/fedora:41"))},
}

// volumeRules are the rules of validateVolumes and validateVirtualMachineInstanceSpecVolumeDisks.
var volumeRules = []admitterRule{
	{fn: "validateVirtualMachineInstanceSpecVolumeDisks", field: "spec.domain.volumes[1].name", vireoField: "spec.volumes[1].name",
		note:   "KubeVirt's path puts volumes under domain; unreachable after its defaults, which add the disk",
		refuse: sp(func(s *vmiSpec) { s.Domain.Devices.Disks = s.Domain.Devices.Disks[:1] }), accept: sp(func(*vmiSpec) {})},
	{fn: "validateVolumes", rule: "unique names", field: "spec.volumes[2].name",
		refuse: sp(func(s *vmiSpec) { s.Volumes = append(s.Volumes, s.Volumes[0]) }), accept: addDisk("extra", virtioDisk, emptyDisk())},
	{fn: "validateVolumes", rule: "a source", field: "spec.volumes[0]",
		refuse: volume0(&v1.VolumeSource{}), accept: volume0(containerDisk("fedora:41"))},
	{fn: "validateVolumes", rule: "one source", field: "spec.volumes[0]",
		refuse: volume0(&v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "fedora:41"}, EmptyDisk: &v1.EmptyDiskSource{Capacity: q("1Gi")}}),
		accept: volume0(containerDisk("fedora:41"))},
	{fn: "validateVolumes", rule: "dataVolume name required", field: "spec.volumes[0].name", vireoField: "spec.volumes[0].dataVolume.name",
		note:   "KubeVirt blames the volume's name",
		refuse: volume0(&v1.VolumeSource{DataVolume: &v1.DataVolumeSource{}}), accept: volume0(&v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "root"}})},
	cloudInitRule("one user-data source", "", v1.CloudInitNoCloudSource{UserData: "#cloud-config\n", UserDataBase64: b64("#cloud-config\n")},
		v1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}),
	cloudInitRule("user data at most 2048 bytes", "", v1.CloudInitNoCloudSource{UserData: strings.Repeat("#", 2049)},
		v1.CloudInitNoCloudSource{UserData: strings.Repeat("#", 2048)}),
	cloudInitRule("userDataBase64 is base64", ".userDataBase64", v1.CloudInitNoCloudSource{UserDataBase64: "#cloud-config"},
		v1.CloudInitNoCloudSource{UserDataBase64: b64("#cloud-config")}),
	cloudInitRule("one network-data source", "", v1.CloudInitNoCloudSource{NetworkData: "version: 2\n", NetworkDataBase64: b64("version: 2\n")},
		v1.CloudInitNoCloudSource{NetworkData: "version: 2\n"}),
	cloudInitRule("network data at most 2048 bytes", "", v1.CloudInitNoCloudSource{NetworkDataBase64: b64(strings.Repeat("#", 2049))},
		v1.CloudInitNoCloudSource{NetworkDataBase64: b64(strings.Repeat("#", 2048))}),
	cloudInitRule("networkDataBase64 is base64", ".networkDataBase64", v1.CloudInitNoCloudSource{NetworkDataBase64: "version: 2"},
		v1.CloudInitNoCloudSource{NetworkDataBase64: b64("version: 2")}),
	cloudInitRule("some data", "", v1.CloudInitNoCloudSource{}, v1.CloudInitNoCloudSource{NetworkData: "version: 2\n"}),
	{fn: "validateVolumes", rule: "hostDisk path required", field: "spec.volumes[2].hostDisk.path", note: kvHostDiskGate,
		refuse: addDisk("host", virtioDisk, hostDisk("", v1.HostDiskExists, "")), accept: addDisk("host", virtioDisk, hostDisk("/data/disk.img", v1.HostDiskExists, ""))},
	{fn: "validateVolumes", rule: "hostDisk type", field: "spec.volumes[2].hostDisk.type", note: kvHostDiskGate,
		refuse: addDisk("host", virtioDisk, hostDisk("/data/disk.img", "File", "")), accept: addDisk("host", virtioDisk, hostDisk("/data/disk.img", v1.HostDiskExists, ""))},
	{fn: "validateVolumes", rule: "hostDisk capacity only with DiskOrCreate", field: "spec.volumes[2].hostDisk.capacity", note: kvHostDiskGate,
		refuse: addDisk("host", virtioDisk, hostDisk("/data/disk.img", v1.HostDiskExists, "1Gi")),
		accept: addDisk("host", virtioDisk, hostDisk("/data/disk.img", v1.HostDiskExistsOrCreate, "1Gi"))},
	{fn: "validateVolumes", rule: "configMap name required", field: "spec.volumes[2].configMap.name",
		refuse: addDisk("cfg", virtioDisk, &v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}),
		accept: addDisk("cfg", virtioDisk, &v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}})},
	{fn: "validateVolumes", rule: "secret name required", field: "spec.volumes[2].secret.secretName",
		refuse: addDisk("sec", virtioDisk, &v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}),
		accept: addDisk("sec", virtioDisk, &v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "app"}})},
	{fn: "validateVolumes", rule: "serviceAccount name required", field: "spec.volumes[2].serviceAccount.serviceAccountName",
		refuse: addDisk("sa", virtioDisk, serviceAccount("")), accept: addDisk("sa", virtioDisk, serviceAccount("default"))},
	{fn: "validateVolumes", rule: "one serviceAccount volume", field: "spec.volumes",
		refuse: both(addDisk("sa", virtioDisk, serviceAccount("default")), addDisk("sa2", virtioDisk, serviceAccount("default"))),
		accept: addDisk("sa", virtioDisk, serviceAccount("default"))},
}

// kvHostDiskGate notes what KubeVirt needs to accept any hostDisk.
const kvHostDiskGate = "KubeVirt accepts a hostDisk only with its HostDisk feature gate"

// credentialRules are the rules of validateAccessCredentials and the Hyper-V dependency rules.
var credentialRules = []admitterRule{
	{fn: "validateAccessCredentials", rule: "one credential type", field: "spec.accessCredentials[0]",
		refuse: credential(v1.AccessCredential{}), accept: credential(sshKey(secret("keys"), agentUsers("fedora")))},
	{fn: "validateAccessCredentials", rule: "ssh key source", field: "spec.accessCredentials[0].sshPublicKey.source",
		refuse: credential(sshKey(nil, agentUsers("fedora"))), accept: credential(sshKey(secret("keys"), agentUsers("fedora")))},
	{fn: "validateAccessCredentials", rule: "one ssh key propagation method", field: "spec.accessCredentials[0].sshPublicKey.propagationMethod",
		refuse: credential(sshKey(secret("keys"), v1.SSHPublicKeyAccessCredentialPropagationMethod{})),
		accept: credential(sshKey(secret("keys"), agentUsers("fedora")))},
	{fn: "validateAccessCredentials", rule: "propagation needs its cloud-init volume", field: "spec.accessCredentials[0].sshPublicKey.propagationMethod",
		refuse: credential(sshKey(secret("keys"), v1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &v1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}})),
		accept: credential(sshKey(secret("keys"), v1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}))},
	{fn: "validateAccessCredentials", rule: "guest agent users required", field: "spec.accessCredentials[0].sshPublicKey.propagationMethod.qemuGuestAgent.users",
		refuse: credential(sshKey(secret("keys"), agentUsers())), accept: credential(sshKey(secret("keys"), agentUsers("fedora")))},
	{fn: "validateAccessCredentials", rule: "password source", field: "spec.accessCredentials[0].userPassword.source",
		refuse: credential(password(nil, true)), accept: credential(password(secret("pw"), true))},
	{fn: "validateAccessCredentials", rule: "password propagation method", field: "spec.accessCredentials[0].userPassword.propagationMethod",
		refuse: credential(password(secret("pw"), false)), accept: credential(password(secret("pw"), true))},
	hypervRule("synic", "vpindex", func(h *v1.FeatureHyperv, on *v1.FeatureState) { h.SyNIC, h.VPIndex = fs(true), on }),
	hypervRule("synictimer", "synic", func(h *v1.FeatureHyperv, on *v1.FeatureState) {
		h.SyNICTimer, h.SyNIC, h.VPIndex = &v1.SyNICTimer{FeatureState: *fs(true)}, on, fs(true)
	}),
	hypervRule("tlbflush", "vpindex", func(h *v1.FeatureHyperv, on *v1.FeatureState) {
		h.TLBFlush, h.VPIndex = &v1.TLBFlush{FeatureState: *fs(true)}, on
	}),
	hypervRule("ipi", "vpindex", func(h *v1.FeatureHyperv, on *v1.FeatureState) { h.IPI, h.VPIndex = fs(true), on }),
}

// vmiSpec shortens the spec type in mutations.
type vmiSpec = v1.VirtualMachineInstanceSpec

// sp turns a change of the spec into a mutation of the VMI.
func sp(f func(s *vmiSpec)) mutation { return func(vmi *v1.VirtualMachineInstance) { f(&vmi.Spec) } }

// both applies a and then b.
func both(a, b mutation) mutation {
	return func(vmi *v1.VirtualMachineInstance) { a(vmi); b(vmi) }
}

// setResource sets the request and limit of a resource; an empty value removes it.
func setResource(r *v1.ResourceRequirements, name v1.ResourceName, req, lim string) {
	if r.Requests == nil {
		r.Requests = v1.ResourceList{}
	}
	if r.Limits == nil {
		r.Limits = v1.ResourceList{}
	}
	for _, x := range []struct {
		list  v1.ResourceList
		value string
	}{{r.Requests, req}, {r.Limits, lim}} {
		delete(x.list, name)
		if x.value != "" {
			x.list[name] = q(x.value)
		}
	}
}

func memRes(req, lim string) mutation {
	return sp(func(s *vmiSpec) { setResource(&s.Domain.Resources, v1.ResourceMemory, req, lim) })
}

// noMemory removes the memory request and the guest memory, leaving the guest no memory at all.
func noMemory(vmi *v1.VirtualMachineInstance) {
	delete(vmi.Spec.Domain.Resources.Requests, v1.ResourceMemory)
	vmi.Spec.Domain.Memory = nil
}

func cpuRes(req, lim string) mutation {
	return sp(func(s *vmiSpec) { setResource(&s.Domain.Resources, v1.ResourceCPU, req, lim) })
}

// dedicated asks for dedicated CPUs with the CPU request, limit and topology given.
func dedicated(req, lim string, sockets, cores, threads uint32) mutation {
	return both(cpuRes(req, lim), sp(func(s *vmiSpec) {
		s.Domain.CPU = &v1.CPU{Sockets: sockets, Cores: cores, Threads: threads, DedicatedCPUPlacement: true}
	}))
}

func machine(t string) mutation { return sp(func(s *vmiSpec) { s.Domain.Machine.Type = t }) }

func bootloader(bios *v1.BIOS, efi *v1.EFI) mutation {
	return sp(func(s *vmiSpec) { s.Domain.Firmware.Bootloader = &v1.Bootloader{BIOS: bios, EFI: efi} })
}

func kernelBoot(args string, c *v1.KernelBootContainer) mutation {
	return sp(func(s *vmiSpec) { s.Domain.Firmware.KernelBoot = &v1.KernelBoot{KernelArgs: args, Container: c} })
}

// startStrategy sets the start strategy (none when empty) and, when liveness, a liveness probe.
func startStrategy(st v1.StartStrategy, liveness bool) mutation {
	return sp(func(s *vmiSpec) {
		if st != "" {
			s.StartStrategy = &st
		}
		if liveness {
			s.LivenessProbe = &v1.Probe{Handler: v1.Handler{GuestAgentPing: &v1.GuestAgentPing{}}}
		}
	})
}

func dns(policy v1.DNSPolicy, c *v1.PodDNSConfig) mutation {
	return sp(func(s *vmiSpec) { s.DNSPolicy, s.DNSConfig = policy, c })
}

func withLabel(key, value string) mutation {
	return func(vmi *v1.VirtualMachineInstance) { vmi.Labels = map[string]string{key: value} }
}

func nodeAffinity(r *v1.NodeSelectorRequirement) mutation {
	sel := &v1.NodeSelector{}
	if r != nil {
		sel.NodeSelectorTerms = []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{*r}}}
	}
	return sp(func(s *vmiSpec) {
		s.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
	})
}

// nodeRequirementRule compares a rule on a required node affinity's match expression.
func nodeRequirementRule(rule, child string, refuse, accept v1.NodeSelectorRequirement) admitterRule {
	const path = "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]."
	return admitterRule{fn: "validateSpecAffinity", rule: rule, field: "spec." + path + child,
		vireoField: "spec.affinity." + path + child, note: kvAffinityPath,
		refuse: nodeAffinity(&refuse), accept: nodeAffinity(&accept)}
}

func preferredNode(weight int32) mutation {
	term := v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: "Exists"}}}
	return sp(func(s *vmiSpec) {
		s.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: weight, Preference: term}}}}
	})
}

func podAffinity(term v1.PodAffinityTerm) mutation {
	return sp(func(s *vmiSpec) {
		s.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
	})
}

// podTerm is a pod affinity term on the node, selecting pods by app with operator op.
func podTerm(op metav1.LabelSelectorOperator, values []string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: op, Values: values}}}}
}

func antiAffinity(weight int32) mutation {
	return sp(func(s *vmiSpec) {
		s.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
			{Weight: weight, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}}}
	})
}

func spread(maxSkew int32, key, when string) mutation {
	return sp(func(s *vmiSpec) {
		s.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: when}}
	})
}

func multus(name string) v1.NetworkSource {
	return v1.NetworkSource{Multus: &v1.MultusNetwork{NetworkName: name}}
}

// bridged is a bridge-bound interface (accepted by Vireo, which fails the VMI as Unsupported).
func bridged(name string) *v1.Interface {
	return &v1.Interface{Name: name, InterfaceBindingMethod: v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}}
}

// extraNetwork adds a network with src, named name[0] or else after the interface, and the
// interface iface if any.
func extraNetwork(src v1.NetworkSource, iface *v1.Interface, name ...string) mutation {
	return sp(func(s *vmiSpec) {
		n := v1.Network{NetworkSource: src}
		switch {
		case len(name) > 0:
			n.Name = name[0]
		case iface != nil:
			n.Name = iface.Name
		}
		s.Networks = append(s.Networks, n)
		if iface != nil {
			s.Domain.Devices.Interfaces = append(s.Domain.Devices.Interfaces, *iface)
		}
	})
}

func network0(src v1.NetworkSource) mutation {
	return sp(func(s *vmiSpec) { s.Networks[0].NetworkSource = src })
}

func setNetworkName(name string) mutation {
	return sp(func(s *vmiSpec) { s.Networks[0].Name, s.Domain.Devices.Interfaces[0].Name = name, name })
}

func iface0(f func(i *v1.Interface)) mutation {
	return sp(func(s *vmiSpec) { f(&s.Domain.Devices.Interfaces[0]) })
}

func mac(m string) mutation { return iface0(func(i *v1.Interface) { i.MacAddress = m }) }

func ports(p ...v1.Port) mutation { return iface0(func(i *v1.Interface) { i.Ports = p }) }

// noNetworking removes the networks and interfaces and keeps KubeVirt from adding them.
func noNetworking(vmi *v1.VirtualMachineInstance) {
	vmi.Spec.Networks, vmi.Spec.Domain.Devices.Interfaces = nil, nil
	vmi.Spec.Domain.Devices.AutoattachPodInterface = ptr.To(false)
}

func tcp22() *v1.TCPSocketAction { return &v1.TCPSocketAction{Port: intstr.FromInt32(22)} }

func readiness(h v1.Handler) mutation {
	return sp(func(s *vmiSpec) { s.ReadinessProbe = &v1.Probe{Handler: h} })
}

func liveness(h v1.Handler) mutation {
	return sp(func(s *vmiSpec) { s.LivenessProbe = &v1.Probe{Handler: h} })
}

var (
	virtioDisk = v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}
	sataCDROM  = v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSATA, ReadOnly: ptr.To(true), Tray: v1.TrayStateClosed}}
)

// addDisk adds a disk named name attached as target and, when src is given, its volume.
func addDisk(name string, target v1.DiskDevice, src *v1.VolumeSource) mutation {
	return sp(func(s *vmiSpec) {
		s.Domain.Devices.Disks = append(s.Domain.Devices.Disks, v1.Disk{Name: name, DiskDevice: target})
		if src != nil {
			s.Volumes = append(s.Volumes, v1.Volume{Name: name, VolumeSource: *src})
		}
	})
}

func emptyDisk() *v1.VolumeSource {
	return &v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: q("1Gi")}}
}

func containerDisk(image string) *v1.VolumeSource {
	return &v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: image, ImagePullPolicy: v1.PullIfNotPresent}}
}

func containerDiskAt(path string) *v1.VolumeSource {
	src := containerDisk("quay.io/containerdisks/fedora:41")
	src.ContainerDisk.Path = path
	return src
}

func hostDisk(path string, typ v1.HostDiskType, capacity string) *v1.VolumeSource {
	h := &v1.HostDisk{Path: path, Type: typ}
	if capacity != "" {
		h.Capacity = q(capacity)
	}
	return &v1.VolumeSource{HostDisk: h}
}

func serviceAccount(name string) *v1.VolumeSource {
	return &v1.VolumeSource{ServiceAccount: &v1.ServiceAccountVolumeSource{ServiceAccountName: name}}
}

func disk0(f func(d *v1.Disk)) mutation {
	return sp(func(s *vmiSpec) { f(&s.Domain.Devices.Disks[0]) })
}

func volume0(src *v1.VolumeSource) mutation {
	return sp(func(s *vmiSpec) { s.Volumes[0].VolumeSource = *src })
}

func diskBus(bus v1.DiskBus, readOnly bool) mutation {
	return disk0(func(d *v1.Disk) { d.DiskDevice = v1.DiskDevice{Disk: &v1.DiskTarget{Bus: bus, ReadOnly: readOnly}} })
}

// bootOrders sets the boot order of the two disks and the interface; a negative order leaves it unset.
func bootOrders(disk0, disk1, iface int) mutation {
	set := func(p **uint32, order int) {
		if order >= 0 {
			o := uint32(order)
			*p = &o
		}
	}
	return sp(func(s *vmiSpec) {
		set(&s.Domain.Devices.Disks[0].BootOrder, disk0)
		set(&s.Domain.Devices.Disks[1].BootOrder, disk1)
		set(&s.Domain.Devices.Interfaces[0].BootOrder, iface)
	})
}

func renameRoot(name string) mutation {
	return sp(func(s *vmiSpec) { s.Domain.Devices.Disks[0].Name, s.Volumes[0].Name = name, name })
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// cloudInitRule compares a rule on the cloud-init volume (volumes[1]); child is the precise
// field under it that KubeVirt names, if any.
func cloudInitRule(rule, child string, refuse, accept v1.CloudInitNoCloudSource) admitterRule {
	set := func(c v1.CloudInitNoCloudSource) mutation {
		return sp(func(s *vmiSpec) { s.Volumes[1].CloudInitNoCloud = &c })
	}
	return admitterRule{fn: "validateVolumes", rule: rule, field: "spec.volumes[1].cloudInitNoCloud" + child,
		refuse: set(refuse), accept: set(accept)}
}
