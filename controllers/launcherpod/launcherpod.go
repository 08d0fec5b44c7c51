// Package launcherpod renders the launcher Pod of a VirtualMachineInstance: the one Pod per VMI
// in which vireo-launcher runs libvirt and QEMU. Render is a pure function, so the Pod's shape is
// table-tested here and the VMI controller only creates what it returns.
package launcherpod

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

const (
	// PrivateVolumeName is the emptyDir for the launcher's own sockets (libvirt session daemon),
	// mounted at protocol.PrivateDir.
	PrivateVolumeName = "private"
	// UnprivilegedPortSysctl lets the launcher (uid 107) serve the guest DHCP (port 67) on the
	// in-Pod bridge; it is one of Kubernetes' safe, namespaced sysctls. Ports below stay
	// privileged.
	UnprivilegedPortSysctl = "net.ipv4.ip_unprivileged_port_start"
	// unprivilegedPortStart is the sysctl's value: DHCP's server port.
	unprivilegedPortStart = "67"
	// ExtraGracePeriodSeconds is added to the VMI's grace period: the node agent destroys the
	// guest after the VMI's grace, and the kubelet's SIGKILL is only the backstop after that.
	ExtraGracePeriodSeconds int64 = 15
)

// DefaultMemoryOverhead is the memory a launcher Pod requests on top of the guest's memory when
// Options.MemoryOverhead is zero: launcher, libvirt session daemon and QEMU's own allocations.
// Measured by make bench (vmibench) under TCG with a 16 MiB translation cache: about 100 MiB
// of RSS beyond the guest's RAM (launcher 21, libvirtd 28, QEMU's own ~50 of which 16 the
// cache), plus a margin, since a VMI with a memory limit gets guest + overhead as the Pod's
// limit. KubeVirt requests more (its fixed part alone is 240 Mi+) as it runs more processes.
var DefaultMemoryOverhead = resource.MustParse("160Mi")

// DefaultCPURequest is the CPU a launcher Pod requests per vCPU when the VMI asks for no CPU:
// KubeVirt's default, one CPU over its default CPU allocation ratio of 10 (vCPUs share cores
// unless the VMI asks for more, or for dedicated CPUs).
var DefaultCPURequest = resource.MustParse("100m")

// Options are the per-installation inputs of Render.
type Options struct {
	// Image is the launcher image, e.g. ghcr.io/vireo-dev/vireo-launcher:<version>.
	Image string
	// MemoryOverhead is the fixed per-VMI memory added to the guest's memory in the Pod's
	// memory request and limit. Zero means DefaultMemoryOverhead.
	MemoryOverhead resource.Quantity
	// Emulation returns the cluster's software-emulation setting when a Pod is rendered (it
	// changes without a restart of the controller); nil passes none to the launcher.
	Emulation func() clusterconfig.EmulationSetting
	// PinnedImages maps a containerDisk volume's name (or launcherpodapi.KernelBootVolumeName) to the image
	// reference the Pod mounts instead of the VMI's: a migration's target mounts the digest
	// its source runs, even if the tag moved since.
	PinnedImages map[string]string
}

// Render returns the launcher Pod for vmi. The Pod has a generated name; the caller creates it.
// Errors name the offending field of the VMI (or of opts) and are never panics.
func Render(vmi *v1.VirtualMachineInstance, opts Options) (*corev1.Pod, error) {
	if vmi == nil {
		return nil, fmt.Errorf("launcher pod: no VirtualMachineInstance given")
	}
	errs := validateInput(vmi, &opts)
	res, resErrs := podResources(vmi, opts.MemoryOverhead)
	errs = append(errs, resErrs...)
	sched, schedErrs := scheduling(&vmi.Spec, field.NewPath("spec"))
	errs = append(errs, schedErrs...)
	disks, diskErrs := diskVolumes(vmi.Spec.Volumes, field.NewPath("spec", "volumes"))
	errs = append(errs, diskErrs...)
	secrets, secretErrs := secretVolumes(vmi.Spec.Volumes, field.NewPath("spec", "volumes"))
	errs = append(errs, secretErrs...)
	images, pullSecrets, imageErrs := imageVolumes(vmi, opts.PinnedImages, field.NewPath("spec", "volumes"))
	errs = append(errs, imageErrs...)
	configs, serviceAccount, configErrs := configVolumes(vmi.Spec.Volumes, field.NewPath("spec", "volumes"))
	errs = append(errs, configErrs...)
	creds, credErrs := accessCredentialVolumes(vmi.Spec.AccessCredentials, field.NewPath("spec", "accessCredentials"))
	errs = append(errs, credErrs...)
	for _, m := range []diskMounts{images, secrets, configs, creds} {
		disks.volumes = append(disks.volumes, m.volumes...)
		disks.mounts = append(disks.mounts, m.mounts...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("launcher pod for VirtualMachineInstance %s/%s: %w",
			vmi.Namespace, vmi.Name, errs.ToAggregate())
	}
	emu := emulation(opts)
	requestKVM(&res, emu)
	requestTun(&res, vmi)

	grace := v1.DefaultGracePeriodSeconds
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	grace += ExtraGracePeriodSeconds

	compute := computeContainer(vmi, opts, emu, res, disks)
	withProbes(&compute, vmi)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            launcherpodapi.PodName(vmi.Name, string(vmi.UID)),
			Namespace:       vmi.Namespace,
			Labels:          podLabels(vmi),
			Annotations:     map[string]string{launcherpodapi.DomainAnnotation: vmi.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			NodeSelector:                  sched.nodeSelector,
			Affinity:                      sched.affinity,
			Tolerations:                   sched.tolerations,
			TopologySpreadConstraints:     sched.spread,
			SchedulerName:                 vmi.Spec.SchedulerName,
			DNSPolicy:                     corev1.DNSPolicy(vmi.Spec.DNSPolicy),
			DNSConfig:                     sched.dnsConfig,
			PriorityClassName:             vmi.Spec.PriorityClassName,
			Hostname:                      vmi.Spec.Hostname,
			Subdomain:                     vmi.Spec.Subdomain,
			// A serviceAccount volume's ServiceAccount (the default one otherwise), whose token
			// the kubelet projects only into that volume.
			ServiceAccountName: serviceAccount,
			// The launcher holds no Kubernetes credentials of its own: it hears only from its
			// node agent.
			AutomountServiceAccountToken: new(false),
			EnableServiceLinks:           new(false),
			// KubeVirt's non-root launcher: libvirt runs in session mode as uid/gid 107.
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser:    new(launcherpodapi.LauncherUser),
				RunAsGroup:   new(launcherpodapi.LauncherUser),
				RunAsNonRoot: new(true),
				// Claims' volumes are handed to the launcher's group, as KubeVirt's non-root
				// launcher has them.
				FSGroup: new(launcherpodapi.LauncherUser),
				Sysctls: []corev1.Sysctl{{Name: UnprivilegedPortSysctl, Value: unprivilegedPortStart}},
				// The runtime's default seccomp filter (KubeVirt leaves its launcher unconfined):
				// libvirtd in session mode and QEMU need none of the calls it refuses (mount,
				// unshare, keyctl, bpf...); userfaultfd, which post-copy would need, is refused
				// for an unprivileged user anyway (vm.unprivileged_userfaultfd=0).
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			ImagePullSecrets: pullSecrets,
			Containers:       []corev1.Container{compute},
			Volumes: append([]corev1.Volume{
				{Name: launcherpodapi.RunDirVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: PrivateVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			}, disks.volumes...),
		},
	}
	return pod, nil
}

// validateInput checks what Render needs beyond the VMI's resources, and fills in defaults of opts.
func validateInput(vmi *v1.VirtualMachineInstance, opts *Options) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if vmi.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "the launcher Pod is named after the VMI"))
	}
	if vmi.Namespace == "" {
		errs = append(errs, field.Required(meta.Child("namespace"), "the launcher Pod runs in the VMI's namespace"))
	}
	if vmi.UID == "" {
		errs = append(errs, field.Required(meta.Child("uid"), "the launcher Pod's owner reference and created-by label need it"))
	}
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "terminationGracePeriodSeconds"), *g, "must be 0 or more"))
	}
	if opts.Image == "" {
		errs = append(errs, field.Required(field.NewPath("options", "image"), "the launcher image must be configured"))
	}
	if opts.MemoryOverhead.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("options", "memoryOverhead"), opts.MemoryOverhead.String(), "must not be negative"))
	}
	if opts.MemoryOverhead.IsZero() {
		opts.MemoryOverhead = DefaultMemoryOverhead.DeepCopy()
	}
	return errs
}

// podLabels are the VMI's labels (as KubeVirt copies them, so Services selecting a VMI's labels
// reach its Pod) without the labels only Vireo sets, plus KubeVirt's launcher labels.
func podLabels(vmi *v1.VirtualMachineInstance) map[string]string {
	labels := maps.Clone(vmi.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, reserved := range []string{v1.NodeNameLabel, v1.MigrationJobLabel, v1.MigrationTargetNodeNameLabel} {
		delete(labels, reserved)
	}
	labels[v1.AppLabel] = v1.LauncherApp
	labels[v1.CreatedByLabel] = string(vmi.UID)
	// A VM name longer than a label value allows (63) is left out rather than failing the Pod.
	if vm := owningVM(vmi); vm != "" && len(validation.IsValidLabelValue(vm)) == 0 {
		labels[launcherpodapi.VirtualMachineNameLabel] = vm
	}
	return labels
}

// owningVM returns the name of the VirtualMachine that controls vmi, or "".
func owningVM(vmi *v1.VirtualMachineInstance) string {
	ref := metav1.GetControllerOf(vmi)
	if ref == nil || ref.Kind != "VirtualMachine" {
		return ""
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != v1.GroupName {
		return ""
	}
	return ref.Name
}

// computeContainer is the launcher's container; it runs the image's entrypoint.
func computeContainer(vmi *v1.VirtualMachineInstance, opts Options, emu *clusterconfig.EmulationSetting, res corev1.ResourceRequirements, disks diskMounts) corev1.Container {
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	return corev1.Container{
		Name:  launcherpodapi.ContainerName,
		Image: opts.Image,
		Args:  append([]string{"--namespace", vmi.Namespace, "--name", vmi.Name, "--uid", string(vmi.UID)}, emulationArgs(emu)...),
		Env: []corev1.EnvVar{
			fieldEnv("POD_NAME", "metadata.name"),
			fieldEnv("POD_NAMESPACE", "metadata.namespace"),
			fieldEnv("POD_UID", "metadata.uid"),
			fieldEnv("POD_IP", "status.podIP"),
			fieldEnv(NodeNameEnv, "spec.nodeName"),
		},
		Resources: res,
		VolumeMounts: append([]corev1.VolumeMount{
			// The Pod's own directory, shared with the node agent only, at the same path in every
			// launcher: a migration's source and target see the same paths (protocol.LauncherDir).
			{Name: launcherpodapi.RunDirVolumeName, MountPath: protocol.LauncherDir},
			{Name: PrivateVolumeName, MountPath: protocol.PrivateDir},
		}, disks.mounts...),
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: new(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			// libvirtd, QEMU and the launcher write only into the Pod's volumes.
			ReadOnlyRootFilesystem: new(true),
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// schedulingFields are the VMI's placement constraints in core/v1 form.
type schedulingFields struct {
	nodeSelector map[string]string
	affinity     *corev1.Affinity
	tolerations  []corev1.Toleration
	spread       []corev1.TopologySpreadConstraint
	dnsConfig    *corev1.PodDNSConfig
}

// scheduling converts the VMI's placement constraints. apis/ mirrors core/v1's types with the same
// JSON, so a JSON round trip is the conversion.
func scheduling(spec *v1.VirtualMachineInstanceSpec, path *field.Path) (schedulingFields, field.ErrorList) {
	var out schedulingFields
	var errs field.ErrorList
	out.nodeSelector = maps.Clone(spec.NodeSelector)
	if spec.Affinity != nil {
		out.affinity = &corev1.Affinity{}
		if err := convert(spec.Affinity, out.affinity); err != nil {
			errs = append(errs, field.Invalid(path.Child("affinity"), "", err.Error()))
		}
	}
	if spec.Tolerations != nil {
		if err := convert(spec.Tolerations, &out.tolerations); err != nil {
			errs = append(errs, field.Invalid(path.Child("tolerations"), "", err.Error()))
		}
	}
	if spec.TopologySpreadConstraints != nil {
		if err := convert(spec.TopologySpreadConstraints, &out.spread); err != nil {
			errs = append(errs, field.Invalid(path.Child("topologySpreadConstraints"), "", err.Error()))
		}
	}
	if spec.DNSConfig != nil {
		out.dnsConfig = &corev1.PodDNSConfig{}
		if err := convert(spec.DNSConfig, out.dnsConfig); err != nil {
			errs = append(errs, field.Invalid(path.Child("dnsConfig"), "", err.Error()))
		}
	}
	return out, errs
}

// convert copies in to out through JSON; both must have the same wire format.
func convert(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
