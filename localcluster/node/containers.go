package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vireo-dev/vireo/localcluster/node/container"
)

// basePath is the PATH a container gets when it sets none, as an image's usual default.
const basePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// containerSpec builds what the shim runs for container c of the worker's Pod: the binary
// its image maps to, its command line with $(VAR) expanded, its environment (resolved now
// that the Pod has its IP), user, working directory, network namespace and mounts.
func (w *podWorker) containerSpec(ctx context.Context, c *corev1.Container, attempt int) (container.Spec, error) {
	logFile := w.logPath(c.Name, attempt)
	pod := w.snapshot()
	bin, err := w.p.images.Resolve(c.Image)
	if err != nil {
		return container.Spec{}, err
	}
	env, skipped, err := ContainerEnv(EnvInput{
		Pod: pod, Container: c, PodIPs: w.podIPs(), HostIPs: []string{w.p.cfg.Address.String()},
		NodeAllocatable: hostCapacity(w.p.cfg.Share), Lookup: apiLookup{ctx: ctx, p: w.p}, Service: w.serviceEnv(pod),
		Base: []string{basePath, "HOSTNAME=" + pod.Name},
	})
	if err != nil {
		return container.Spec{}, err
	}
	if len(skipped) > 0 {
		w.event(corev1.EventTypeWarning, "InvalidEnvironmentVariableNames",
			"Keys [%s] from the EnvFrom of container %s were skipped since they are invalid variable names", strings.Join(skipped, ", "), c.Name)
	}
	lookup := envLookup(env)
	expand := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = Expand(s, lookup)
		}
		return out
	}
	argv, err := bin.Argv(expand(c.Command), expand(c.Args))
	if err != nil {
		return container.Spec{}, err
	}
	uid, gid, groups, err := identity(pod, c)
	if err != nil {
		return container.Spec{}, err
	}
	mounts, err := w.mounts(ctx, c, lookup)
	if err != nil {
		return container.Spec{}, err
	}
	spec := container.Spec{
		Path: argv[0], Args: argv[1:], Env: env, WorkingDir: c.WorkingDir,
		UID: uid, GID: gid, SupplementalGroups: groups, NoNewPrivileges: noPrivilegeEscalation(c),
		Hostname: podHostname(pod), Mounts: mounts, LogFile: logFile, Resources: w.resources(pod, c, attempt),
	}
	if !pod.Spec.HostNetwork {
		spec.Netns = w.netnsPath()
	}
	return spec, nil
}

// resources are a container's limits, enforced in a cgroup of its own run when the host has
// the controllers (reportUnenforcedLimits says when not).
func (w *podWorker) resources(pod *corev1.Pod, c *corev1.Container, attempt int) container.Resources {
	r := container.Resources{Cgroup: fmt.Sprintf("vireo/%s/%s/%s-%d", w.p.cfg.Name, pod.UID, c.Name, attempt)}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		r.MemoryBytes = q.Value()
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		r.CPUMilli = q.MilliValue()
	}
	if _, ok := container.CgroupsAvailable(); !ok {
		return container.Resources{}
	}
	return r
}

// allContainers lists the Pod's init containers, then its containers, in a new slice.
func allContainers(pod *corev1.Pod) []corev1.Container {
	out := make([]corev1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	return append(append(out, pod.Spec.InitContainers...), pod.Spec.Containers...)
}

// noPrivilegeEscalation is allowPrivilegeEscalation: false, which a kubelet turns into the
// no_new_privs bit.
func noPrivilegeEscalation(c *corev1.Container) bool {
	sc := c.SecurityContext
	return sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
}

// identity is the user and groups a container runs as: its securityContext over the Pod's,
// root when neither says. runAsNonRoot with user 0 (or no user) refuses to start, as a
// kubelet does.
func identity(pod *corev1.Pod, c *corev1.Container) (uid, gid *int64, groups []int64, err error) {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	uid, gid = psc.RunAsUser, psc.RunAsGroup
	nonRoot := psc.RunAsNonRoot
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
	}
	if nonRoot != nil && *nonRoot && (uid == nil || *uid == 0) {
		return nil, nil, nil, configError("container %q has runAsNonRoot and would run as root (set runAsUser to a non-zero user)", c.Name)
	}
	if uid != nil && gid == nil {
		zero := int64(0)
		gid = &zero
	}
	groups = append(groups, psc.SupplementalGroups...)
	if psc.FSGroup != nil {
		groups = append(groups, *psc.FSGroup)
	}
	return uid, gid, groups, nil
}

// serviceEnv is the kubernetes Service's variables, and with enableServiceLinks (the
// default) those of every Service of the Pod's namespace, as a kubelet provides them.
func (w *podWorker) serviceEnv(pod *corev1.Pod) map[string]string {
	ks := w.p.cfg.KubernetesService
	env := KubernetesServiceEnv(ks.IP.String(), int32(ks.Port))
	if pod.Spec.EnableServiceLinks != nil && !*pod.Spec.EnableServiceLinks || w.p.services == nil {
		return env
	}
	svcs, err := w.p.services.Services(pod.Namespace).List(labels.Everything())
	if err != nil {
		return env
	}
	for _, svc := range svcs {
		if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone || len(svc.Spec.Ports) == 0 {
			continue
		}
		prefix := strings.ToUpper(strings.ReplaceAll(svc.Name, "-", "_"))
		env[prefix+"_SERVICE_HOST"] = svc.Spec.ClusterIP
		env[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(svc.Spec.Ports[0].Port))
	}
	return env
}

func envLookup(env []string) func(string) (string, bool) {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// apiLookup reads the Secrets and ConfigMaps of a container's environment from the API
// (the Node authorizer lets a node read those its Pods use).
type apiLookup struct {
	ctx context.Context
	p   *Provider
}

func (l apiLookup) Secret(namespace, name string) (map[string][]byte, bool, error) {
	s, err := l.p.client.CoreV1().Secrets(namespace).Get(l.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return s.Data, true, nil
}

func (l apiLookup) ConfigMap(namespace, name string) (map[string]string, bool, error) {
	cm, err := l.p.client.CoreV1().ConfigMaps(namespace).Get(l.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return cm.Data, true, nil
}

// runDir is the state directory of one run (attempt) of a container; logFile its log.
func (w *podWorker) runDir(name string, attempt int) string {
	return filepath.Join(w.dir, "containers", name, strconv.Itoa(attempt))
}

func (w *podWorker) logPath(name string, attempt int) string {
	return filepath.Join(w.dir, "logs", name, strconv.Itoa(attempt)+".log")
}

// lastAttempt is the highest run of a container found on disk (-1 for none): after a node
// restart its state tells whether the container still runs.
func (w *podWorker) lastAttempt(name string) int {
	entries, err := os.ReadDir(filepath.Join(w.dir, "containers", name))
	if err != nil {
		return -1
	}
	last := -1
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > last {
			last = n
		}
	}
	return last
}

// pruneRuns removes the state and logs of the runs before the previous one, which nothing
// reads any more (kubectl logs --previous reads the one before the current): a container
// that crashes for days does not fill the disk with them.
func (w *podWorker) pruneRuns(name string, current int) {
	entries, _ := os.ReadDir(filepath.Join(w.dir, "containers", name))
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n < current-1 {
			_ = os.RemoveAll(w.runDir(name, n))
			_ = os.Remove(w.logPath(name, n))
		}
	}
}

func containerID(pod *corev1.Pod, name string, attempt int) string {
	return fmt.Sprintf("vireo-local://%s-%s-%d", pod.UID, name, attempt)
}

// podDir is a Pod's directory on the node, named by UID (never by a user-chosen name).
func (p *Provider) podDir(uid types.UID) string {
	return filepath.Join(p.cfg.Root, "pods", string(uid))
}

// netnsPath is the Pod's network namespace.
func (w *podWorker) netnsPath() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.netns
}

// logFile is a container's log for kubectl logs: the current run, or with previous the one
// before; done reports when a followed log has ended (the run exited).
func (w *podWorker) logFile(name string, previous bool) (string, func() bool, error) {
	w.mu.Lock()
	r, ok := w.runs[name]
	var attempt int
	if ok {
		attempt = r.attempt
	}
	w.mu.Unlock()
	if !ok || (r.dir == "" && !previous) {
		return "", nil, fmt.Errorf("container %q in pod %s is waiting to start", name, w.key())
	}
	if previous {
		if attempt == 0 {
			return "", nil, fmt.Errorf("previous terminated container %q in pod %s not found", name, w.key())
		}
		return w.logPath(name, attempt-1), func() bool { return true }, nil
	}
	return w.logPath(name, attempt), func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		r := w.runs[name]
		return r.attempt != attempt || !r.obs.Running
	}, nil
}

// runningDir is the state directory of a container's running process.
func (w *podWorker) runningDir(name string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.runs[name]
	if !ok || !r.obs.Running || r.dir == "" {
		return "", fmt.Errorf("container %q in pod %s is not running", name, w.key())
	}
	return r.dir, nil
}
