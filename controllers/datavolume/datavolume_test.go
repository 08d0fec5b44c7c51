package datavolume

import (
	"bufio"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/importerapi"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

func httpDV(storage *cdiv1beta1.StorageSpec, pvc *cdiv1beta1.PersistentVolumeClaimSpec) *cdiv1beta1.DataVolume {
	return &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "disk", Namespace: "ns", UID: "dv-uid"},
		Spec: cdiv1beta1.DataVolumeSpec{Storage: storage, PVC: pvc, Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{
			URL: "https://images.example/tiny.qcow2.xz", Checksum: "sha256:abc", ExtraHeaders: []string{"X-Token: t"}, SecretRef: "creds", CertConfigMap: "ca",
			SecretExtraHeaders: []string{"hdrs"}, InsecureSkipVerify: true,
		}}},
	}
}

func requests(size string) cdiv1beta1.VolumeResourceRequirements {
	return cdiv1beta1.VolumeResourceRequirements{Requests: cdiv1beta1.ResourceList{cdiv1beta1.ResourceStorage: resource.MustParse(size)}}
}

func TestClaim(t *testing.T) {
	block := cdiv1beta1.PersistentVolumeBlock
	class := "fast"
	for name, tc := range map[string]struct {
		dv    *cdiv1beta1.DataVolume
		size  int64
		modes []corev1.PersistentVolumeAccessMode
	}{
		// 1 GiB / 0.945, rounded up to whole MiB.
		"storage, filesystem: raised by the overhead": {httpDV(&cdiv1beta1.StorageSpec{Resources: requests("1Gi")}, nil), 1084 << 20,
			[]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		"storage, block: as asked": {httpDV(&cdiv1beta1.StorageSpec{Resources: requests("1Gi"), VolumeMode: &block,
			AccessModes: []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteMany}}, nil), 1 << 30,
			[]corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}},
		"pvc: exactly as given": {httpDV(nil, &cdiv1beta1.PersistentVolumeClaimSpec{Resources: requests("1Gi"), StorageClassName: &class,
			AccessModes: []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteOnce}}), 1 << 30,
			[]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Claim(tc.dv, DefaultFilesystemOverhead, resource.Quantity{})
			if err != nil {
				t.Fatal(err)
			}
			got := c.Spec.Resources.Requests[corev1.ResourceStorage]
			if got.Value() != tc.size || !slices.Equal(c.Spec.AccessModes, tc.modes) {
				t.Errorf("size %d modes %v, want %d %v", got.Value(), c.Spec.AccessModes, tc.size, tc.modes)
			}
			if c.Name != "disk" || !metav1.IsControlledBy(c, tc.dv) || c.Labels[DataVolumeLabel] != "disk" {
				t.Errorf("claim %s labels %v owners %v", c.Name, c.Labels, c.OwnerReferences)
			}
		})
	}
	// The usable part of the raised claim is at least what was asked for (importer's rule).
	usable, err := importerapi.UsableSize(1084<<20, DefaultFilesystemOverhead)
	if err != nil || usable < 1<<30 {
		t.Errorf("usable size of the raised claim %d (%v), want at least 1 GiB", usable, err)
	}
	if _, err := Claim(httpDV(nil, nil), DefaultFilesystemOverhead, resource.Quantity{}); err == nil {
		t.Error("a DataVolume without storage or pvc rendered a claim")
	}
}

func TestImporterPod(t *testing.T) {
	dv := httpDV(&cdiv1beta1.StorageSpec{Resources: requests("1Gi")}, nil)
	claim, _ := Claim(dv, DefaultFilesystemOverhead, resource.Quantity{})
	pod, err := ImporterPod(dv, claim, 1<<30, ImporterOptions{Image: "importer:1", FilesystemOverhead: 0.055})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	for _, want := range []string{"--source=http", "--url=https://images.example/tiny.qcow2.xz", "--checksum=sha256:abc", "--header=X-Token: t",
		"--secret-dir=" + secretDir, "--ca-bundle=" + caDir, "--header-dir=" + headersDir + "/0", "--insecure-skip-verify", "--capacity=1073741824", "--filesystem-overhead=0.055", "--owner-uid=dv-uid"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %q lack %q", c.Args, want)
		}
	}
	sc := pod.Spec.SecurityContext
	if *sc.RunAsUser != 107 || *sc.FSGroup != 107 || *pod.Spec.AutomountServiceAccountToken || *c.SecurityContext.AllowPrivilegeEscalation ||
		pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure || c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("pod spec %+v", pod.Spec)
	}
	if pod.Labels["app"] != ImporterApp || !metav1.IsControlledBy(pod, dv) || len(pod.Spec.Volumes) != 5 {
		t.Errorf("labels %v owners %v volumes %v", pod.Labels, pod.OwnerReferences, pod.Spec.Volumes)
	}
	// Bounded: CDI's limits, and a scratch space of the volume's size and a margin.
	if l := c.Resources.Limits; l.Memory().String() != "600M" || l.Cpu().String() != "750m" {
		t.Errorf("importer limits %v, want CDI's 750m and 600M", l)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == "scratch" && (v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Value() != 1<<30+1<<30/64+64<<20) {
			t.Errorf("scratch volume %+v, want a size limit of the capacity, a 64th and 64Mi", v.VolumeSource)
		}
	}
	blank := &cdiv1beta1.DataVolume{ObjectMeta: dv.ObjectMeta, Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}}}}
	if pod, err := ImporterPod(blank, claim, 1<<30, ImporterOptions{}); err != nil || !slices.Contains(pod.Spec.Containers[0].Args, "--source=blank") {
		t.Errorf("blank: %v", err)
	}
	url, secret := "docker://registry.example/tiny:1", "pull"
	reg := &cdiv1beta1.DataVolume{ObjectMeta: dv.ObjectMeta, Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{
		Registry: &cdiv1beta1.DataVolumeSourceRegistry{URL: &url, SecretRef: &secret}}}}
	pod, err = ImporterPod(reg, claim, 1<<30, ImporterOptions{InsecureRegistries: []string{"10.0.0.1:5000"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--source=registry", "--url=" + url, "--secret-dir=" + secretDir, "--insecure-registry=10.0.0.1:5000"} {
		if !slices.Contains(pod.Spec.Containers[0].Args, want) {
			t.Errorf("registry args %q lack %q", pod.Spec.Containers[0].Args, want)
		}
	}
}

func boundClaim() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "disk"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
}

func importerWith(phase corev1.PodPhase, cs corev1.ContainerStatus) *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{cs}}}
}

func TestNextStatus(t *testing.T) {
	now := metav1.Now()
	running := corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	transient := corev1.ContainerStatus{RestartCount: 2, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "I1201 progress\nGET http://x: connection refused"}}}
	permanent := corev1.ContainerStatus{RestartCount: 1, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: importerapi.ExitPermanent, Message: "E1201 failed\nchecksum mismatch: got sha256:1, want sha256:2\n"}}}
	exited := corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
	pending := boundClaim()
	pending.Status.Phase = corev1.ClaimPending
	for name, tc := range map[string]struct {
		obs      observation
		phase    cdiv1beta1.DataVolumePhase
		progress cdiv1beta1.DataVolumeProgress
		running  cdiv1beta1.ConditionStatus
		message  string
		restarts int32
	}{
		"no claim yet":                  {observation{}, cdiv1beta1.Pending, ProgressUnknown, cdiv1beta1.ConditionFalse, "no importer is running yet", 0},
		"claim pending":                 {observation{claim: pending}, cdiv1beta1.Pending, ProgressUnknown, cdiv1beta1.ConditionFalse, "no importer is running yet", 0},
		"wait for first consumer":       {observation{claim: pending, waitForFirstConsumer: true}, cdiv1beta1.WaitForFirstConsumer, ProgressUnknown, cdiv1beta1.ConditionFalse, "no importer is running yet", 0},
		"bound, no importer":            {observation{claim: boundClaim()}, cdiv1beta1.PVCBound, ProgressUnknown, cdiv1beta1.ConditionFalse, "no importer is running yet", 0},
		"importer scheduled":            {observation{claim: boundClaim(), pod: &corev1.Pod{}}, cdiv1beta1.ImportScheduled, ProgressUnknown, cdiv1beta1.ConditionFalse, "", 0},
		"importing":                     {observation{claim: boundClaim(), pod: importerWith(corev1.PodRunning, running), progress: "45.23%"}, cdiv1beta1.ImportInProgress, "45.23%", cdiv1beta1.ConditionTrue, "", 0},
		"transient failure":             {observation{claim: boundClaim(), pod: importerWith(corev1.PodRunning, transient)}, cdiv1beta1.ImportInProgress, ProgressUnknown, cdiv1beta1.ConditionFalse, "GET http://x: connection refused", 2},
		"permanent failure":             {observation{claim: boundClaim(), pod: importerWith(corev1.PodRunning, permanent)}, cdiv1beta1.Failed, ProgressUnknown, cdiv1beta1.ConditionFalse, "checksum mismatch: got sha256:1, want sha256:2", 1},
		"exited, Pod not yet Succeeded": {observation{claim: boundClaim(), pod: importerWith(corev1.PodRunning, exited), progress: "99.47%"}, cdiv1beta1.ImportInProgress, "99.47%", cdiv1beta1.ConditionFalse, "", 0},
		"succeeded":                     {observation{claim: boundClaim(), pod: importerWith(corev1.PodSucceeded, corev1.ContainerStatus{})}, cdiv1beta1.Succeeded, "100.0%", cdiv1beta1.ConditionFalse, "Import Complete", 0},
	} {
		t.Run(name, func(t *testing.T) {
			dv := httpDV(&cdiv1beta1.StorageSpec{Resources: requests("1Gi")}, nil)
			st := nextStatus(dv, tc.obs, now)
			run := findCondition(&st, cdiv1beta1.DataVolumeRunning)
			if st.Phase != tc.phase || st.Progress != tc.progress || run == nil || run.Status != tc.running || run.Message != tc.message || st.RestartCount != tc.restarts {
				t.Errorf("phase %s progress %s running %+v restarts %d; want %s %s %s %q %d", st.Phase, st.Progress, run, st.RestartCount,
					tc.phase, tc.progress, tc.running, tc.message, tc.restarts)
			}
			ready := findCondition(&st, cdiv1beta1.DataVolumeReady)
			if want := tc.phase == cdiv1beta1.Succeeded; ready == nil || (ready.Status == cdiv1beta1.ConditionTrue) != want {
				t.Errorf("Ready %+v, want True only once Succeeded", ready)
			}
			// A final status stays as it is, whatever is observed next.
			dv.Status = st
			if again := nextStatus(dv, observation{}, now); ended(&st) && statusChanged(&st, &again) {
				t.Errorf("final status changed: %+v -> %+v", st, again)
			}
		})
	}
}

func TestParseProgress(t *testing.T) {
	text := "# HELP x\n# TYPE kubevirt_cdi_import_progress_total gauge\nkubevirt_cdi_import_progress_total{ownerUID=\"u\"} 45.2345\n"
	if p, err := parseProgress(bufio.NewScanner(strings.NewReader(text))); err != nil || p != "45.23%" {
		t.Errorf("progress %q, %v", p, err)
	}
	if p, err := parseProgress(bufio.NewScanner(strings.NewReader("# TYPE kubevirt_cdi_import_progress_total gauge\n"))); err != nil || p != ProgressUnknown {
		t.Errorf("no sample: %q, %v", p, err)
	}
	if got := lastLine("a\nb\n"); got != "b" {
		t.Errorf("lastLine %q", got)
	}
}

func TestClone(t *testing.T) {
	clone := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: "ns", UID: "u"}, Spec: cdiv1beta1.DataVolumeSpec{
		Source:  &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Name: "golden"}},
		Storage: &cdiv1beta1.StorageSpec{},
	}}
	claim, err := Claim(clone, DefaultFilesystemOverhead, resource.MustParse("68Mi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := claim.Spec.Resources.Requests[corev1.ResourceStorage]; got.Value() != 68<<20 {
		t.Errorf("a clone without a size got %s, want the source's 68Mi", got.String())
	}
	pod, err := ImporterPod(clone, claim, 68<<20, ImporterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	if !slices.Contains(c.Args, "--source=file") || !slices.Contains(c.Args, "--path=/source/disk.img") {
		t.Errorf("clone args %q", c.Args)
	}
	var mounted bool
	for _, v := range pod.Spec.Volumes {
		mounted = mounted || (v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "golden" && v.PersistentVolumeClaim.ReadOnly)
	}
	if !mounted {
		t.Errorf("the source claim is not mounted read-only: %+v", pod.Spec.Volumes)
	}
	running := corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	if st := nextStatus(clone, observation{claim: boundClaim(), pod: importerWith(corev1.PodRunning, running)}, metav1.Now()); st.Phase != cdiv1beta1.CloneInProgress {
		t.Errorf("a running clone is %s, want CloneInProgress", st.Phase)
	}

	// Across namespaces: the target receives in upload mode, the source Pod sends from the
	// source namespace, on the target's node, to the socket in its own emptyDir, which the node
	// agent relays to the target's: neither Pod has a hostPath.
	clone.Spec.Source.PVC.Namespace = "elsewhere"
	o := ImporterOptions{Image: "importer:1"}
	target, err := ImporterPod(clone, claim, 68<<20, o)
	if err != nil {
		t.Fatal(err)
	}
	if args := target.Spec.Containers[0].Args; !slices.Contains(args, "--source=upload") {
		t.Errorf("the target of a clone across namespaces: args %q, want upload mode", args)
	}
	if target.Labels[v1.AppLabel] != v1.UploadApp || target.Annotations[uploadapi.CloneSourceNamespaceAnnotation] != "elsewhere" {
		t.Errorf("the target Pod's labels %v and annotations %v do not tell the node agent its source", target.Labels, target.Annotations)
	}
	for _, v := range target.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "golden" {
			t.Error("the target Pod mounts a claim of another namespace")
		}
	}
	target.UID, target.Spec.NodeName = "target-uid", "node-1"
	source := SourcePod(clone, target, o)
	if source.Namespace != "elsewhere" || source.Name != uploadapi.CloneSourcePodName("u") || source.Annotations[CloneTargetAnnotation] != "ns/copy" ||
		source.Labels[CloneTargetUIDLabel] != "u" || source.Labels[v1.AppLabel] != v1.CloneSourceApp {
		t.Errorf("source Pod %s/%s labels %v annotations %v", source.Namespace, source.Name, source.Labels, source.Annotations)
	}
	sc := source.Spec.Containers[0]
	if sc.Args[0] != "send" || !slices.Contains(sc.Args, "--path=/source/disk.img") || !slices.Contains(sc.Args, "--upload-socket=/var/run/vireo-upload/upload.sock") {
		t.Errorf("source args %q", sc.Args)
	}
	for _, pod := range []*corev1.Pod{target, source} {
		var runDir bool
		for _, v := range pod.Spec.Volumes {
			if v.HostPath != nil {
				t.Errorf("Pod %s mounts a hostPath: %+v", pod.Name, v)
			}
			runDir = runDir || (v.Name == launcherpodapi.RunDirVolumeName && v.EmptyDir != nil)
		}
		if !runDir {
			t.Errorf("Pod %s has no emptyDir %q for the node agent", pod.Name, launcherpodapi.RunDirVolumeName)
		}
	}
	terms := source.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchFields[0].Values[0] != "node-1" {
		t.Errorf("the source Pod must run on the target's node: %+v", terms)
	}
	if *source.Spec.SecurityContext.RunAsUser != importerUID || *source.Spec.AutomountServiceAccountToken {
		t.Errorf("the source Pod runs as %d, token %v", *source.Spec.SecurityContext.RunAsUser, *source.Spec.AutomountServiceAccountToken)
	}
	failed := observation{claim: boundClaim(), pod: importerWith(corev1.PodRunning, running), sourceFailed: "the clone's source: no such file"}
	if st := nextStatus(clone, failed, metav1.Now()); st.Phase != cdiv1beta1.Failed || findCondition(&st, cdiv1beta1.DataVolumeRunning).Message != "the clone's source: no such file" {
		t.Errorf("a failed source: %s %+v", st.Phase, st.Conditions)
	}
}

func TestUpload(t *testing.T) {
	dv := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "up", Namespace: "ns", UID: "u"}, Spec: cdiv1beta1.DataVolumeSpec{
		Source:  &cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}},
		Storage: &cdiv1beta1.StorageSpec{Resources: requests("1Gi")},
	}}
	claim, _ := Claim(dv, DefaultFilesystemOverhead, resource.Quantity{})
	pod, err := ImporterPod(dv, claim, 1<<30, ImporterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	if !slices.Contains(c.Args, "--source=upload") || !slices.Contains(c.Args, "--upload-socket="+uploadDir+"/"+uploadapi.SocketName) {
		t.Errorf("upload args %q", c.Args)
	}
	// The socket's directory is an emptyDir the node agent finds as a launcher's: no hostPath,
	// so the Pod passes Pod Security baseline.
	var mount *corev1.VolumeMount
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == uploadDir {
			mount = &c.VolumeMounts[i]
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("the upload Pod mounts a hostPath: %+v", v)
		}
		if mount != nil && v.Name == mount.Name && (v.EmptyDir == nil || v.Name != launcherpodapi.RunDirVolumeName) {
			t.Errorf("the upload socket's volume %+v, want the emptyDir %q", v, launcherpodapi.RunDirVolumeName)
		}
	}
	if mount == nil || pod.Labels[v1.AppLabel] != v1.UploadApp {
		t.Errorf("upload mount %+v, labels %v", mount, pod.Labels)
	}
	running := corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	if st := nextStatus(dv, observation{claim: boundClaim(), pod: importerWith(corev1.PodRunning, running)}, metav1.Now()); st.Phase != cdiv1beta1.UploadReady {
		t.Errorf("a running upload Pod: %s, want UploadReady", st.Phase)
	}
	if st := nextStatus(dv, observation{claim: boundClaim(), pod: &corev1.Pod{}}, metav1.Now()); st.Phase != cdiv1beta1.UploadScheduled {
		t.Errorf("an upload Pod not running yet: %s, want UploadScheduled", st.Phase)
	}
}
