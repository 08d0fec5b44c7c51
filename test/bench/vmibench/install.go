package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

// benchNS is the namespace of the measured VMIs; their domains are named "vmibench_<name>",
// which is how the benchmark recognises its own QEMU processes.
const benchNS = "vmibench"

// floorNetnsPrefix names the network namespaces of the floor's domains.
const floorNetnsPrefix = "vmibench-floor-"

// floorTmp holds the floor's private directory: a short path, for the sockets libvirt binds
// there, on a disk like the launchers' (not a tmpfs: the disks' cache mode depends on O_DIRECT).
const floorTmp = "/var/tmp"

// floorDirPrefix is the prefix of the floor's private directory in floorTmp.
const floorDirPrefix = "vmibench-"

// clusterOptions are an installation apart from `make up`'s, the e2e suite's and aggbench's
// (own root, network namespace, bridge address and ports) with two local nodes.
func clusterOptions(c config) localcluster.Options {
	opts := localcluster.DefaultOptions(os.Stderr)
	opts.Root, opts.BinDir, opts.ManifestsDir = c.root, c.bin, c.manifests
	opts.Images = c.images
	opts.Nodes = 2
	opts.Network = localcluster.Network{Netns: "vireo-vmibench", HostIP: net.IPv4(10, 254, 0, 1), PrefixLen: 24, ClusterCIDR: "10.246.0.0/16"}
	opts.Ports = localcluster.Ports{EtcdClient: 32379, EtcdPeer: 32380, KubeAPIServer: 36443, ControllerManager: 40257,
		Scheduler: 40259, Registry: 35000}
	return opts
}

// clients reach the installation as its admin, with no client-side rate limit.
type clients struct {
	cfg   *rest.Config
	kube  kubernetes.Interface
	vireo versioned.Interface
}

func newClients(cluster *localcluster.Cluster) (*clients, error) {
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	vireo, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{cfg: cfg, kube: kube, vireo: vireo}, nil
}

func createNamespace(ctx context.Context, cl *clients, name string) error {
	_, err := cl.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ownProcesses lists the processes this benchmark may have left: QEMU running one of its
// domains (the VMIs' or the floor's), the launchers of its namespace, and libvirtd daemons of
// the floor's directories.
func ownProcesses() ([]hostproc.Proc, error) {
	procs, err := hostproc.List()
	if err != nil {
		return nil, err
	}
	var out []hostproc.Proc
	for _, p := range procs {
		line := p.Joined()
		switch {
		case strings.Contains(p.Name(), "qemu-system") && strings.Contains(line, "guest="+benchNS+"_"):
			out = append(out, p)
		case strings.Contains(p.Name(), "vireo-launcher") && p.HasArgPair("--namespace", benchNS):
			out = append(out, p)
		case p.Name() == "libvirtd" && strings.Contains(line, floorTmp+"/"+floorDirPrefix):
			out = append(out, p)
		}
	}
	return out, nil
}

// waitNoOwnProcesses polls until none of ownProcesses is left, killing (by pid) those still
// there after grace. It returns an error naming any that survive.
func waitNoOwnProcesses(ctx context.Context, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	killed := false
	for {
		left, err := ownProcesses()
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if killed {
				return fmt.Errorf("processes of the benchmark survived SIGKILL: %v", describe(left))
			}
			for _, p := range left {
				say("killing leftover process %d (%s)", p.Pid, p.Name())
				_ = syscall.Kill(p.Pid, syscall.SIGKILL)
			}
			killed, deadline = true, time.Now().Add(10*time.Second)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("processes of the benchmark still running: %v: %w", describe(left), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func describe(ps []hostproc.Proc) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%d %s", p.Pid, p.Name()))
	}
	return out
}

// leftoversAfter polls until no process of the benchmark is left and returns those still
// there after limit (they are killed by the final clean-up, not here).
func leftoversAfter(ctx context.Context, limit time.Duration) ([]string, error) {
	deadline := time.Now().Add(limit)
	for {
		left, err := ownProcesses()
		if err != nil || len(left) == 0 {
			return nil, err
		}
		if time.Now().After(deadline) {
			say("processes left %s after the VMIs were gone: %v", limit, describe(left))
			return describe(left), nil
		}
		select {
		case <-ctx.Done():
			return describe(left), ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// removeFloorLeftovers deletes the floor's network namespaces and directories an interrupted
// run left behind (their processes are gone by then).
func removeFloorLeftovers() {
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), floorNetnsPrefix) {
				_ = deleteNetns(e.Name())
			}
		}
	}
	if dirs, err := filepath.Glob(filepath.Join(floorTmp, floorDirPrefix+"*")); err == nil {
		for _, d := range dirs {
			_ = os.RemoveAll(d)
		}
	}
}

// absolute makes the paths independent of later working-directory changes.
func absolute(c config) (config, error) {
	for _, p := range []*string{&c.out, &c.root, &c.bin, &c.manifests, &c.images, &c.web} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return c, err
		}
		*p = abs
	}
	return c, nil
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "vmibench %s: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
