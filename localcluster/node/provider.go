package node

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/exec"

	"github.com/vireo-dev/vireo/localcluster/node/container"
	"github.com/vireo-dev/vireo/localcluster/node/podnet"
)

// Provider runs the Pods virtual-kubelet hands it, one podWorker each, and reports their
// status through the NotifyPods callback as soon as it changes.
type Provider struct {
	client   kubernetes.Interface
	cfg      Config
	status   *nodeStatus
	images   Images
	events   record.EventRecorder
	services corev1listers.ServiceLister

	netOnce sync.Once
	net     *podnet.Network
	netErr  error

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	notify  func(*corev1.Pod)
}

func newProvider(client kubernetes.Interface, cfg Config, status *nodeStatus) (*Provider, error) {
	if err := os.MkdirAll(filepath.Join(cfg.Root, "pods"), 0o700); err != nil {
		return nil, err
	}
	return &Provider{client: client, cfg: cfg, status: status, images: Images{BinDir: cfg.BinDir},
		workers: map[types.UID]*podWorker{}}, nil
}

// network is the node's Pod network, available once the Node has its Pod CIDR.
func (p *Provider) network(ctx context.Context) (*podnet.Network, error) {
	cidr, err := p.status.waitPodCIDR(ctx)
	if err != nil {
		return nil, err
	}
	p.netOnce.Do(func() {
		p.net, p.netErr = podnet.New(podnet.Config{NodeName: p.cfg.Name, PodCIDR: cidr, Prefix: p.cfg.NetnsPrefix,
			StateDir: filepath.Join(p.cfg.Root, "cni")})
	})
	return p.net, p.netErr
}

// NotifyPods registers the callback that publishes a Pod's changed status.
func (p *Provider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
}

func (p *Provider) publish(pod *corev1.Pod) {
	p.mu.Lock()
	cb := p.notify
	p.mu.Unlock()
	if cb != nil {
		cb(pod)
	}
}

// CreatePod starts the Pod's worker, which adopts containers still running from an earlier
// run of this node.
func (p *Provider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[pod.UID]; ok {
		w.update(pod)
		return nil
	}
	w := newPodWorker(p, pod)
	p.workers[pod.UID] = w
	go w.run()
	return nil
}

// UpdatePod records the Pod's new metadata; a Pod's containers are immutable.
func (p *Provider) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	return p.CreatePod(ctx, pod)
}

// DeletePod starts the Pod's termination (SIGTERM, SIGKILL after its grace period) and
// returns; the worker reports the terminal status and removes the Pod from the API.
func (p *Provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	w, ok := p.workers[pod.UID]
	p.mu.Unlock()
	if !ok {
		// Not started by this run of the node, but an earlier run may have left containers.
		if _, err := os.Stat(p.podDir(pod.UID)); err == nil {
			go p.removeLeftovers(context.Background(), pod.UID, podRef(pod))
		}
		return errdefs.NotFoundf("pod %s/%s is not running on node %s", pod.Namespace, pod.Name, p.cfg.Name)
	}
	w.terminate(pod)
	return nil
}

func (p *Provider) forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.workers, uid)
}

func (p *Provider) worker(namespace, name string) (*podWorker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// A Pod deleted and created again under its name has a terminating worker and a new one.
	for _, w := range p.workers {
		if w.namespace == namespace && w.name == name && !w.isTerminating() {
			return w, nil
		}
	}
	return nil, errdefs.NotFoundf("pod %s/%s is not on node %s", namespace, name, p.cfg.Name)
}

// GetPod returns the Pod as this node runs it, with its current status.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	w, err := p.worker(namespace, name)
	if err != nil {
		return nil, err
	}
	return w.snapshot(), nil
}

// GetPodStatus returns the Pod's current status.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods lists the Pods this node runs.
func (p *Provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	workers := make([]*podWorker, 0, len(p.workers))
	for _, w := range p.workers {
		workers = append(workers, w)
	}
	p.mu.Unlock()
	pods := make([]*corev1.Pod, 0, len(workers))
	for _, w := range workers {
		pods = append(pods, w.snapshot())
	}
	return pods, nil
}

// GetContainerLogs streams a container's log (kubectl logs): the current run, or with
// Previous the one before it; Follow keeps streaming until the container exits.
func (p *Provider) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	w, err := p.worker(namespace, podName)
	if err != nil {
		return nil, err
	}
	path, done, err := w.logFile(containerName, opts.Previous)
	if err != nil {
		return nil, err
	}
	lo := container.LogOptions{Timestamps: opts.Timestamps, Follow: opts.Follow}
	if opts.Tail > 0 {
		n := int64(opts.Tail)
		lo.Tail = &n
	}
	if opts.LimitBytes > 0 {
		n := int64(opts.LimitBytes)
		lo.LimitBytes = &n
	}
	if !opts.SinceTime.IsZero() {
		t := opts.SinceTime
		lo.SinceTime = &t
	} else if opts.SinceSeconds > 0 {
		t := time.Now().Add(-time.Duration(opts.SinceSeconds) * time.Second)
		lo.SinceTime = &t
	}
	r, wr := io.Pipe()
	go func() {
		wr.CloseWithError(container.ReadLog(ctx, path, lo, wr, done))
	}()
	return r, nil
}

// execCommand maps a command naming the image's executable (kubectl exec pod -- /agnhost
// connect ...) to the binary that stands for it; other commands are the host's.
func (w *podWorker) execCommand(containerName string, cmd []string) []string {
	if len(cmd) == 0 {
		return cmd
	}
	pod := w.snapshot()
	for _, c := range allContainers(pod) {
		if c.Name != containerName {
			continue
		}
		bin, err := w.p.images.Resolve(c.Image)
		if err != nil {
			return cmd
		}
		if argv, err := bin.Argv(cmd[:1], cmd[1:]); err == nil {
			return argv
		}
	}
	return cmd
}

// RunInContainer runs a command in a running container (kubectl exec): in its network,
// mount and UTS namespaces, as its user, with its environment; with a TTY when asked.
func (p *Provider) RunInContainer(ctx context.Context, namespace, podName, containerName string, cmd []string, attach api.AttachIO) error {
	w, err := p.worker(namespace, podName)
	if err != nil {
		return err
	}
	dir, err := w.runningDir(containerName)
	if err != nil {
		return err
	}
	req := container.ExecRequest{Command: w.execCommand(containerName, cmd), Stdin: attach.Stdin(), Stdout: attach.Stdout(), Stderr: attach.Stderr(), TTY: attach.TTY()}
	if attach.TTY() {
		sizes := make(chan container.TermSize)
		req.Resize = sizes
		go func() {
			defer close(sizes)
			for {
				select {
				case s, ok := <-attach.Resize():
					if !ok {
						return
					}
					sizes <- container.TermSize{Width: s.Width, Height: s.Height}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	code, err := container.Exec(ctx, p.cfg.Self, dir, req)
	if err != nil {
		return err
	}
	if code != 0 {
		return exec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	}
	return nil
}
