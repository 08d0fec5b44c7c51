// Package e2e tests Vireo as a user meets it: a real kube-apiserver built from upstream
// source with vireo-apiserver aggregated into it (vireo-local), driven with real kubectl.
package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	"github.com/vireo-dev/vireo/localcluster"
)

var (
	cluster *localcluster.Cluster
	admin   *rest.Config
	vireo   versioned.Interface
	kube    kubernetes.Interface
	repo    string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e tests skipped with -short")
		os.Exit(0)
	}
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	if repo, err = filepath.Abs("../.."); err != nil {
		return 0, err
	}
	opts := localcluster.DefaultOptions(os.Stderr)
	opts.Root = filepath.Join(repo, "_output", "e2e")
	opts.BinDir = filepath.Join(repo, "_output", "bin")
	opts.ManifestsDir = filepath.Join(repo, "artifacts")
	// Apart from `make up`'s installation, so both can run at once.
	opts.Network = localcluster.Network{Netns: "vireo-e2e", HostIP: net.IPv4(10, 251, 0, 1), PrefixLen: 24, ClusterCIDR: "10.245.0.0/16"}
	opts.Nodes = 2
	// The control plane as artifacts/base runs it: two vireo-apiservers on a three-member
	// etcd, two vireo-controllers (ha_test.go kills them).
	opts.HA = true
	opts.Ports = localcluster.Ports{EtcdClient: 12379, EtcdPeer: 12380, KubeAPIServer: 16443, ControllerManager: 20257, Scheduler: 20259, VireoEtcd: 32379}
	for _, bin := range []string{"kubectl", "kube-apiserver", "vireo-apiserver"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, bin)); err != nil {
			return 0, fmt.Errorf("%s not built: run `make build upstream` (make test does)", bin)
		}
	}
	// With the release before built (make upgrade-base), the installation starts from it and
	// TestUpgradeWithRunningGuests, run alone first, upgrades it to this build (upgrade_test.go).
	installed := opts
	if base, err := findUpgradeBase(); err != nil {
		return 0, err
	} else if base != nil && testSelected(upgradeTestName) {
		installed, upgradeFrom, upgradeTo = base.options(opts), base, &opts
	}
	cluster = localcluster.New(installed)
	// The nodes are kubelets with containerd and runc, running the images of make oci.
	agnhost = cluster.RegistryAddress() + "/vireo/agnhost:latest"
	_ = cluster.Down(true) // a clean installation per run
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := cluster.Up(ctx); err != nil {
		_ = cluster.Down(false)
		return 0, err
	}
	// VIREO_E2E_KEEP=1 keeps data and logs (stopped) for debugging a failure.
	defer func() { _ = cluster.Down(os.Getenv("VIREO_E2E_KEEP") == "") }()
	if err := connect(); err != nil {
		return 0, err
	}
	code := 0
	if upgradeTo != nil {
		if code, err = runUpgradeFirst(m); err != nil {
			return code, err
		}
	}
	if c := m.Run(); c != 0 {
		code = c
	}
	if err := writeFigures(filepath.Join(repo, "_output", "bench")); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: writing the day-2 figures:", err)
	}
	return code, nil
}

// connect makes the clients of the installation's admin.
func connect() error {
	var err error
	if admin, err = cluster.RESTConfig(); err != nil {
		return err
	}
	if vireo, err = versioned.NewForConfig(admin); err != nil {
		return err
	}
	kube, err = kubernetes.NewForConfig(admin)
	return err
}

// kubectl runs the upstream kubectl as the admin and returns its standard output.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := kubectlResult(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// kubectlResult runs kubectl and returns stdout, stderr and the exit error.
func kubectlResult(args ...string) (string, string, error) {
	cmd := exec.Command(filepath.Join(cluster.Options().BinDir, "kubectl"), append([]string{"--kubeconfig", cluster.Options().Kubeconfig()}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// nsCount numbers the tests' namespaces; tests run in parallel (t.Parallel) take numbers too.
var nsCount atomic.Int64

// namespace creates a fresh namespace for one test, deleted when the test ends (without
// waiting: its guests shut down while the next test runs), so that the guests of earlier
// tests neither hold the nodes' CPU requests nor burn the machine's CPU. A failed test's
// namespace stays when VIREO_E2E_KEEP is set, for debugging.
func namespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("e2e-%d-%d", os.Getpid()%1000, nsCount.Add(1))
	kubectl(t, "create", "namespace", ns)
	t.Cleanup(func() {
		if t.Failed() {
			diagnose(t, ns)
		}
		if t.Failed() && os.Getenv("VIREO_E2E_KEEP") != "" {
			return
		}
		if _, stderr, err := kubectlResult("delete", "namespace", ns, "--wait=false"); err != nil {
			t.Logf("deleting namespace %s: %v %s", ns, err, stderr)
		}
	})
	return ns
}

// baselineNamespace is a test namespace that enforces Pod Security baseline (the level most
// clusters enforce on tenants): kube-apiserver refuses any Pod there with a hostPath, added
// capabilities or host namespaces.
func baselineNamespace(t *testing.T) string {
	t.Helper()
	ns := namespace(t)
	kubectl(t, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=baseline", "pod-security.kubernetes.io/enforce-version=latest")
	return ns
}

// manifestFile writes a manifest into the test's temporary directory and returns its path.
func manifestFile(t *testing.T, manifest string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
