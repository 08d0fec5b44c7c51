package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/localcluster/node/container"
)

// volumeError is a volume that cannot be set up (event reason FailedMount).
type volumeError struct {
	name string
	err  error
}

// Error reads as a kubelet's FailedMount message, which tools and the VMI controller quote.
func (e *volumeError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", e.name, e.err)
}
func (e *volumeError) Unwrap() error { return e.err }

// defaultTokenSeconds is a projected token's lifetime when the Pod does not say (an hour,
// the API's default for serviceAccountToken sources).
const defaultTokenSeconds = 3600

// volumeDir is where a volume's content is materialised on the host.
func (w *podWorker) volumeDir(name string) string { return filepath.Join(w.dir, "volumes", name) }

// hostPathDir maps a hostPath volume's path into the node's own directory, so that local
// nodes sharing one machine never share (or clobber) each other's host paths, and no path
// from a Pod spec reaches outside the node's directory.
func (w *podWorker) hostPathDir(path string) string {
	return filepath.Join(w.p.cfg.Root, "host", filepath.Clean("/"+path))
}

// setupVolumes materialises every volume of the Pod: emptyDir, hostPath (node-mapped), PVC
// (its PersistentVolume's host path), and the files of secret, configMap, downwardAPI and
// projected volumes (Service Account tokens requested for this Pod).
func (w *podWorker) setupVolumes(ctx context.Context, pod *corev1.Pod) error {
	for _, v := range pod.Spec.Volumes {
		if err := w.setupVolume(ctx, pod, v); err != nil {
			return &volumeError{name: v.Name, err: err}
		}
	}
	return nil
}

func (w *podWorker) setupVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume) error {
	dir := w.volumeDir(v.Name)
	switch {
	case v.EmptyDir != nil:
		// Made world-writable once, as a kubelet does; a container may change that later.
		if _, err := os.Stat(dir); err == nil {
			return nil
		}
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		return os.Chmod(dir, 0o777)
	case v.HostPath != nil:
		return ensureHostPath(w.hostPathDir("/"), w.hostPathDir(v.HostPath.Path), v.HostPath.Type)
	case v.PersistentVolumeClaim != nil:
		dir, err := w.pvcPath(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		if err != nil || fsGroup(pod) < 0 || v.PersistentVolumeClaim.ReadOnly {
			return err
		}
		return setVolumeOwnership(dir, fsGroup(pod))
	}
	files, mode, err := w.volumeFiles(ctx, pod, v)
	if err != nil {
		return err
	}
	return writeFiles(dir, files, mode, fsGroup(pod))
}

// volumeFiles is the content of a file-backed volume, keyed by relative path.
func (w *podWorker) volumeFiles(ctx context.Context, pod *corev1.Pod, v corev1.Volume) (map[string][]byte, os.FileMode, error) {
	src := v.VolumeSource
	switch {
	case src.Secret != nil:
		files, err := w.secretFiles(ctx, pod.Namespace, src.Secret.SecretName, src.Secret.Items, src.Secret.Optional)
		return files, fileMode(src.Secret.DefaultMode), err
	case src.ConfigMap != nil:
		files, err := w.configMapFiles(ctx, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional)
		return files, fileMode(src.ConfigMap.DefaultMode), err
	case src.DownwardAPI != nil:
		files, err := w.downwardFiles(pod, src.DownwardAPI.Items)
		return files, fileMode(src.DownwardAPI.DefaultMode), err
	case src.Projected != nil:
		files, err := w.projectedFiles(ctx, pod, src.Projected.Sources)
		return files, fileMode(src.Projected.DefaultMode), err
	}
	return nil, 0, fmt.Errorf("this volume type is not supported on vireo-local nodes (emptyDir, hostPath, persistentVolumeClaim, secret, configMap, downwardAPI and projected are)")
}

func (w *podWorker) projectedFiles(ctx context.Context, pod *corev1.Pod, sources []corev1.VolumeProjection) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, s := range sources {
		var part map[string][]byte
		var err error
		switch {
		case s.Secret != nil:
			part, err = w.secretFiles(ctx, pod.Namespace, s.Secret.Name, s.Secret.Items, s.Secret.Optional)
		case s.ConfigMap != nil:
			part, err = w.configMapFiles(ctx, pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional)
		case s.DownwardAPI != nil:
			part, err = w.downwardFiles(pod, s.DownwardAPI.Items)
		case s.ServiceAccountToken != nil:
			part, err = w.tokenFile(ctx, pod, s.ServiceAccountToken)
		default:
			err = fmt.Errorf("projected source not supported on vireo-local nodes")
		}
		if err != nil {
			return nil, err
		}
		for k, v := range part {
			files[k] = v
		}
	}
	return files, nil
}

func (w *podWorker) secretFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	data, found, err := apiLookup{ctx: ctx, p: w.p}.Secret(ns, name)
	if err != nil {
		return nil, err
	}
	if !found {
		if isOptional(optional) {
			return nil, nil
		}
		return nil, fmt.Errorf("secret %q not found", name)
	}
	return pick(data, items, optional, "secret "+name)
}

func (w *podWorker) configMapFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	data, found, err := apiLookup{ctx: ctx, p: w.p}.ConfigMap(ns, name)
	if err != nil {
		return nil, err
	}
	if !found {
		if isOptional(optional) {
			return nil, nil
		}
		return nil, fmt.Errorf("configmap %q not found", name)
	}
	bytes := make(map[string][]byte, len(data))
	for k, v := range data {
		bytes[k] = []byte(v)
	}
	return pick(bytes, items, optional, "configmap "+name)
}

// pick applies a volume's items (key -> path) to an object's data; without items every key
// is a file of its own name.
func pick(data map[string][]byte, items []corev1.KeyToPath, optional *bool, what string) (map[string][]byte, error) {
	if len(items) == 0 {
		return data, nil
	}
	files := map[string][]byte{}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if isOptional(optional) {
				continue
			}
			return nil, fmt.Errorf("%s has no key %q", what, it.Key)
		}
		files[it.Path] = v
	}
	return files, nil
}

func (w *podWorker) downwardFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.labels":
			v = formatMap(pod.Labels)
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.annotations":
			v = formatMap(pod.Annotations)
		case it.FieldRef != nil:
			v, err = FieldValue(pod, it.FieldRef, w.podIPs(), []string{w.p.cfg.Address.String()})
		case it.ResourceFieldRef != nil:
			v, err = resourceValue(EnvInput{Pod: pod, NodeAllocatable: hostCapacity(w.p.cfg.Share)}, it.ResourceFieldRef)
		}
		if err != nil {
			return nil, fmt.Errorf("downwardAPI %s: %w", it.Path, err)
		}
		files[it.Path] = []byte(v)
	}
	return files, nil
}

// formatMap is the downward API's file format for labels and annotations: key="value" lines.
func formatMap(m map[string]string) string {
	var lines []string
	for k, v := range m {
		lines = append(lines, fmt.Sprintf("%s=%q", k, v))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// cachedToken is a Service Account token the worker requested, renewed once 80% of its
// lifetime has passed, as a kubelet renews them.
type cachedToken struct {
	token           []byte
	issued, expires time.Time
}

func (t cachedToken) fresh(now time.Time) bool {
	return t.token != nil && now.Before(t.issued.Add(t.expires.Sub(t.issued)*8/10))
}

// tokenFile is a Service Account token bound to this Pod, as a kubelet writes it for a
// projected serviceAccountToken source: requested once, renewed at 80% of its lifetime.
func (w *podWorker) tokenFile(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) (map[string][]byte, error) {
	key := src.Audience + "/" + src.Path
	w.mu.Lock()
	cached := w.tokens[key]
	w.mu.Unlock()
	if cached.fresh(time.Now()) {
		return map[string][]byte{src.Path: cached.token}, nil
	}
	seconds := int64(defaultTokenSeconds)
	if src.ExpirationSeconds != nil {
		seconds = *src.ExpirationSeconds
	}
	var audiences []string
	if src.Audience != "" {
		audiences = []string{src.Audience}
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr, err := w.p.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: &seconds,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for service account %q: %w", sa, err)
	}
	w.mu.Lock()
	w.tokens[key] = cachedToken{token: []byte(tr.Status.Token), issued: time.Now(), expires: tr.Status.ExpirationTimestamp.Time}
	w.mu.Unlock()
	return map[string][]byte{src.Path: []byte(tr.Status.Token)}, nil
}

// pvcPath is the host directory of a bound claim's PersistentVolume (hostPath or local).
func (w *podWorker) pvcPath(ctx context.Context, ns, claim string) (string, error) {
	pvc, err := w.p.client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if pvc.Spec.VolumeName == "" || pvc.Status.Phase != corev1.ClaimBound {
		return "", fmt.Errorf("persistentvolumeclaim %q is not bound yet", claim)
	}
	pv, err := w.p.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, nil
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, nil
	}
	return "", fmt.Errorf("persistentvolume %q is neither hostPath nor local; vireo-local nodes mount only those", pv.Name)
}

// mounts are container c's volume mounts as bind mounts from the materialised volumes; a
// subPathExpr is expanded with the container's environment (lookup), as a kubelet does.
func (w *podWorker) mounts(ctx context.Context, c *corev1.Container, lookup func(string) (string, bool)) ([]container.Mount, error) {
	pod := w.snapshot()
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	var out []container.Mount
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, configError("container %q mounts volume %q, which the Pod does not define", c.Name, m.Name)
		}
		src, beneath := w.volumeDir(m.Name), ""
		readOnly := m.ReadOnly
		switch {
		case v.HostPath != nil:
			// A container may plant symlinks in a host path other Pods see.
			src, beneath = w.hostPathDir(v.HostPath.Path), w.hostPathDir("/")
		case v.PersistentVolumeClaim != nil:
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			p, err := w.pvcPath(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
			cancel()
			if err != nil {
				return nil, configError("container %q volume %q: %v", c.Name, m.Name, err)
			}
			src, readOnly = p, readOnly || v.PersistentVolumeClaim.ReadOnly
		case v.EmptyDir == nil:
			readOnly = true // secret, configMap, downwardAPI and projected files
		}
		subPath := m.SubPath
		if m.SubPathExpr != "" {
			if subPath != "" {
				return nil, configError("container %q volume mount %q: subPath and subPathExpr are mutually exclusive", c.Name, m.Name)
			}
			subPath = Expand(m.SubPathExpr, lookup)
		}
		if subPath != "" {
			sub := filepath.Clean(subPath)
			if filepath.IsAbs(sub) || sub == ".." || strings.HasPrefix(sub, "../") {
				return nil, configError("container %q volume mount %q: subPath %q must be a relative path inside the volume", c.Name, m.Name, subPath)
			}
			if err := makeSubPath(src, sub); err != nil {
				return nil, configError("container %q volume mount %q: %v", c.Name, m.Name, err)
			}
			if beneath == "" {
				beneath = src
			}
			src = filepath.Join(src, sub)
		}
		out = append(out, container.Mount{Source: src, Beneath: beneath, Target: m.MountPath, ReadOnly: readOnly})
	}
	return append(out, w.etcHostsMount(pod, c)...), nil
}

// makeSubPath creates the directories of sub (a cleaned relative path) missing below the
// volume directory root, with root's permissions, as a kubelet creates a missing subPath. No
// symlink is followed: a container may plant one in a volume other Pods or the node share.
func makeSubPath(root, sub string) error {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the volume directory %s: %w", root, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return err
	}
	perm := st.Mode & 0o777
	dir, names := root, strings.Split(sub, "/")
	for i, name := range names {
		if name == "" || name == "." {
			continue
		}
		dir = filepath.Join(dir, name)
		if err := unix.Mkdirat(fd, name, perm); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(fd)
			return fmt.Errorf("creating the subPath directory %s: %w", dir, err)
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("opening the subPath %s: %w", dir, err)
		}
		fd = next
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return err
		}
		// An existing file may be the subPath itself (a ConfigMap key, say); the mount then
		// refuses a symbolic link.
		if st.Mode&unix.S_IFMT != unix.S_IFDIR && i < len(names)-1 {
			unix.Close(fd)
			return fmt.Errorf("the subPath %s is not a directory (symbolic links are not followed)", dir)
		}
	}
	unix.Close(fd)
	return nil
}

// volumeSyncPeriod is how often a running Pod's file-backed volumes are refreshed (Secret and
// ConfigMap changes, token renewal), a kubelet's sync period.
const volumeSyncPeriod = time.Minute

// syncVolumes rewrites the Pod's file-backed volumes every volumeSyncPeriod until ctx ends.
func (w *podWorker) syncVolumes(ctx context.Context) {
	t := time.NewTicker(volumeSyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := w.setupVolumes(ctx, w.snapshot()); err != nil && ctx.Err() == nil {
				w.event(corev1.EventTypeWarning, "FailedMount", "refreshing volumes: %v", err)
			}
		}
	}
}

// teardownVolumes removes what the Pod's volumes left on the node: its volume directory (host
// paths and PVs stay).
func (w *podWorker) teardownVolumes() {
	_ = os.RemoveAll(filepath.Join(w.dir, "volumes"))
}
