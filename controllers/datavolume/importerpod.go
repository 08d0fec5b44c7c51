package datavolume

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/importerapi"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

const (
	// ImporterApp is the app label of importer Pods (CDI's), by which the controller watches them.
	ImporterApp = "containerized-data-importer"
	// importerUID runs the importer, as the launcher runs QEMU: the disk image is theirs.
	importerUID = 107
	// ProgressPort serves the importer's progress (Prometheus text, CDI's metric name).
	ProgressPort = 8443
	// Paths inside the importer Pod.
	dataDir, scratchDir, secretDir, caDir = "/data", "/scratch", "/var/run/vireo/source-secret", "/var/run/vireo/source-ca"
	// sourceDir is where a clone's source claim is mounted, read-only.
	sourceDir = "/source"
	// uploadDir is where an upload or clone source Pod mounts the emptyDir it shares with the
	// node agent (its upload socket's directory).
	uploadDir = "/var/run/vireo-upload"
	// headersDir holds the Secrets of secretExtraHeaders, one directory each.
	headersDir = "/var/run/vireo/source-headers"
)

// ImporterOptions configure importer Pods.
type ImporterOptions struct {
	// Image is vireo-importer's image.
	Image string
	// FilesystemOverhead is the share of a Filesystem volume the disk image may not use.
	FilesystemOverhead float64
	// InsecureRegistries are registries (host[:port]) that registry sources reach over plain HTTP.
	InsecureRegistries []string
}

// ImporterPodName is the name of dv's importer Pod.
func ImporterPodName(dv *cdiv1beta1.DataVolume) string { return "importer-" + dv.Name }

// ImporterPod renders the Pod that imports dv's source into claim, whose capacity (bytes) the
// disk image is sized to. It runs as uid 107 without a ServiceAccount token or privileges; a
// source's Secret and CA ConfigMap are mounted read-only.
func ImporterPod(dv *cdiv1beta1.DataVolume, claim *corev1.PersistentVolumeClaim, capacity int64, o ImporterOptions) (*corev1.Pod, error) {
	args, err := importerArgs(dv, claim, capacity, o)
	if err != nil {
		return nil, err
	}
	labels := ownLabels(dv)
	labels["app"] = ImporterApp
	pod := importerShell(metav1.ObjectMeta{Name: ImporterPodName(dv), Namespace: dv.Namespace, Labels: labels,
		OwnerReferences: []metav1.OwnerReference{ownerReference(dv)}}, args, o)
	c := &pod.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "progress", ContainerPort: ProgressPort, Protocol: corev1.ProtocolTCP}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: dataDir}, {Name: "scratch", MountPath: scratchDir}}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: scratchLimit(capacity)}}},
	}
	switch src := dv.Spec.Source; {
	case src.HTTP != nil:
		addSourceVolumes(&pod.Spec, src.HTTP.SecretRef, src.HTTP.CertConfigMap)
		for i, secret := range src.HTTP.SecretExtraHeaders {
			name := "source-headers-" + strconv.Itoa(i)
			pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
			c := &pod.Spec.Containers[0]
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: headersDir + "/" + strconv.Itoa(i), ReadOnly: true})
		}
	case src.Registry != nil && src.Registry.SecretRef != nil:
		addSourceVolumes(&pod.Spec, *src.Registry.SecretRef, "")
	case src.Upload != nil:
		addUploadDir(pod)
	case src.PVC != nil && crossNamespace(dv) != "":
		// The source Pod, in the source's namespace, sends the disk to this one's socket.
		addUploadDir(pod)
		pod.Annotations = map[string]string{uploadapi.CloneSourceNamespaceAnnotation: crossNamespace(dv)}
	case src.PVC != nil:
		addSourceClaim(&pod.Spec, src.PVC.Name)
	}
	return pod, nil
}

// importerShell is a Pod running vireo-importer with args: as uid 107, without a
// ServiceAccount token, privileges or a writable root, restarted on failure; its message is
// the log's last line when it fails.
func importerShell(meta metav1.ObjectMeta, args []string, o ImporterOptions) *corev1.Pod {
	no, yes := false, true
	uid := int64(importerUID)
	return &corev1.Pod{
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyOnFailure,
			AutomountServiceAccountToken: &no,
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &uid, FSGroup: &uid, RunAsNonRoot: &yes,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "importer", Image: o.Image, Args: args,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Resources:                importerResources(),
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
}

// importerResources are CDI's defaults for its importer Pods: requests 100m CPU and 64Mi,
// limits 750m CPU and 600M. The limit bounds what a hostile image can make the importer (or
// qemu-img, xz, zstd) allocate on the node.
func importerResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("750m"), corev1.ResourceMemory: resource.MustParse("600M")},
	}
}

// scratchLimit bounds the scratch emptyDir of an import into capacity bytes: the importer
// itself stops a scratch file at the usable size plus a 64th plus 16 MiB; the kubelet evicts
// a Pod whose scratch grows past this anyway.
func scratchLimit(capacity int64) *resource.Quantity {
	return resource.NewQuantity(capacity+capacity/64+64<<20, resource.BinarySI)
}

// addSourceClaim mounts a clone's source claim read-only at sourceDir.
func addSourceClaim(spec *corev1.PodSpec, claim string) {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "source", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: true}}})
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "source", MountPath: sourceDir, ReadOnly: true})
}

// importerArgs is the importer's command line for dv's source.
func importerArgs(dv *cdiv1beta1.DataVolume, claim *corev1.PersistentVolumeClaim, capacity int64, o ImporterOptions) ([]string, error) {
	src := dv.Spec.Source
	if src == nil {
		return nil, fmt.Errorf("DataVolume %s/%s has no source", dv.Namespace, dv.Name)
	}
	overhead := o.FilesystemOverhead
	if claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock {
		overhead = 0
	}
	args := []string{"--target-dir=" + dataDir, "--scratch-dir=" + scratchDir, "--capacity=" + strconv.FormatInt(capacity, 10),
		"--filesystem-overhead=" + strconv.FormatFloat(overhead, 'f', -1, 64), "--owner-uid=" + string(dv.UID),
		"--progress-address=:" + strconv.Itoa(ProgressPort)}
	switch {
	case src.HTTP != nil:
		h := src.HTTP
		args = append(args, "--source=http", "--url="+h.URL)
		if h.Checksum != "" {
			args = append(args, "--checksum="+h.Checksum)
		}
		for _, header := range h.ExtraHeaders {
			args = append(args, "--header="+header)
		}
		for i := range h.SecretExtraHeaders {
			args = append(args, "--header-dir="+headersDir+"/"+strconv.Itoa(i))
		}
		if h.InsecureSkipVerify {
			args = append(args, "--insecure-skip-verify")
		}
		if h.SecretRef != "" {
			args = append(args, "--secret-dir="+secretDir)
		}
		if h.CertConfigMap != "" {
			args = append(args, "--ca-bundle="+caDir)
		}
	case src.Registry != nil:
		r := src.Registry
		if r.URL == nil || *r.URL == "" {
			return nil, fmt.Errorf("DataVolume %s/%s: the registry source has no url", dv.Namespace, dv.Name)
		}
		args = append(args, "--source=registry", "--url="+*r.URL)
		if r.SecretRef != nil && *r.SecretRef != "" {
			args = append(args, "--secret-dir="+secretDir)
		}
		for _, reg := range o.InsecureRegistries {
			args = append(args, "--insecure-registry="+reg)
		}
	case src.PVC != nil && crossNamespace(dv) == "":
		args = append(args, "--source=file", "--path="+sourceDir+"/"+importerapi.DiskName)
	case src.Upload != nil || src.PVC != nil:
		// An upload, or a clone from another namespace, whose source Pod sends the disk.
		args = append(args, "--source=upload", "--upload-socket="+uploadDir+"/"+uploadapi.SocketName)
	case src.Blank != nil:
		args = append(args, "--source=blank")
	default:
		return nil, fmt.Errorf("DataVolume %s/%s: this source is not imported by vireo-importer yet", dv.Namespace, dv.Name)
	}
	return args, nil
}

// addUploadDir gives the Pod the directory of its upload socket, which the node agent relays
// uploads to, and labels the Pod for the agent.
func addUploadDir(pod *corev1.Pod) {
	pod.Labels[v1.AppLabel] = v1.UploadApp
	addRunDir(&pod.Spec)
}

// addRunDir mounts, at uploadDir, the directory the Pod shares with its node agent: an emptyDir
// named like the launcher's (launcherpodapi.RunDirVolumeName), which the agent finds below the
// kubelet's Pod directories, so that the Pod needs no hostPath and passes Pod Security baseline.
func addRunDir(spec *corev1.PodSpec) {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: launcherpodapi.RunDirVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: launcherpodapi.RunDirVolumeName, MountPath: uploadDir})
}

// addSourceVolumes mounts the source's credentials Secret and CA ConfigMap read-only.
func addSourceVolumes(spec *corev1.PodSpec, secret, configMap string) {
	c := &spec.Containers[0]
	if secret != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "source-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "source-secret", MountPath: secretDir, ReadOnly: true})
	}
	if configMap != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "source-ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "source-ca", MountPath: caDir, ReadOnly: true})
	}
}
