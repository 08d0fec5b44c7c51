package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/webui/assets"
	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/test/bench/apimetrics"
	"github.com/vireo-dev/vireo/test/images"
)

// env is the installation the runs share.
type env struct {
	c        config
	cluster  *localcluster.Cluster
	cl       *clients
	scraper  *apimetrics.Scraper
	template *v1.VirtualMachineInstance
}

// measured is everything one benchmark run measured.
type measured struct {
	runs   []lifecycleResult
	floors []floorResult
	// podFloors are the bare Pods' starts, one per run size (see podfloor.go).
	podFloors   []podFloorResult
	argsCompare string
	// altCache is the smallest run's floor with config.altTCGCacheMiB (nil when not run).
	altCache *floorResult
	// vmActions is the VM phase (nil when config.vms is 0).
	vmActions *vmActionsResult
	// coldStart is the cold containerDisk starts (nil when config.coldStarts is 0).
	coldStart *coldStartResult
	elapsed   time.Duration
}

// bench starts the installation, measures every run size and its floor and writes the report.
// Whatever it started is stopped and deleted before it returns.
func bench(ctx context.Context, c config) (err error) {
	began := time.Now()
	if c, err = absolute(c); err != nil {
		return err
	}
	if err := preflight(c); err != nil {
		return err
	}
	cluster := localcluster.New(clusterOptions(c))
	if err := cleanUp(cluster, false); err != nil { // the leftovers of an interrupted run
		return err
	}
	defer func() { err = errors.Join(err, cleanUp(cluster, true)) }()
	say("starting vireo-local with 2 nodes in %s", c.root)
	if err := cluster.Up(ctx); err != nil {
		return err
	}
	e, err := newEnv(ctx, c, cluster)
	if err != nil {
		return err
	}
	if c.warmup && (c.lifecycle || c.density > 0) {
		if _, _, err := e.lifecycle(ctx, runSpec{n: len(e.cluster.NodeNames()), prefix: "warmup", pin: true}); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	if c.lifecycle {
		if err := e.lifecycleBench(ctx, began); err != nil {
			return err
		}
	}
	if err := phase(ctx, c, c.uiRuns > 0, "web console", e.webConsole, webConsoleReport); err != nil {
		return err
	}
	if err := phase(ctx, c, c.streams, "streams", e.streams, streamsReport); err != nil {
		return err
	}
	if err := phase(ctx, c, c.portForward, "port-forward", e.portForward, portForwardReport); err != nil {
		return err
	}
	if err := phase(ctx, c, c.migration, "migration", e.migrations, migrationReport); err != nil {
		return err
	}
	return phase(ctx, c, c.density > 0, "density", e.density, densityReport)
}

// phase runs one phase when on: it measures, then writes the phase's report with how long the
// phase took.
func phase[R any](ctx context.Context, c config, on bool, name string, measure func(context.Context) (R, error), report func(config, R, time.Duration) error) error {
	if !on {
		return nil
	}
	began := time.Now()
	res, err := measure(ctx)
	if err != nil {
		return fmt.Errorf("%s phase: %w", name, err)
	}
	return report(c, res, time.Since(began))
}

// lifecycleBench runs the lifecycle runs, their floors and the VM phase and writes their report.
func (e *env) lifecycleBench(ctx context.Context, began time.Time) error {
	m, err := e.measureAll(ctx)
	if err != nil {
		return err
	}
	if e.c.coldStarts > 0 {
		cs, err := e.coldStarts(ctx, e.c.coldStarts)
		if err != nil {
			return fmt.Errorf("cold starts: %w", err)
		}
		m.coldStart = &cs
	}
	if e.c.vms > 0 {
		vm, err := e.vmActions(ctx, e.c.vms)
		if err != nil {
			return fmt.Errorf("VM phase: %w", err)
		}
		m.vmActions = &vm
	}
	m.elapsed = time.Since(began)
	return report(e.c, e, m)
}

// measureAll measures each run size and, right after it (so all see the machine alike), its
// floor and its Pod floor; after the smallest, the floor once more with the alternative TCG cache size.
func (e *env) measureAll(ctx context.Context) (measured, error) {
	var m measured
	image := e.c.containerDiskFile()
	for i, n := range e.c.sizes {
		idle := time.Duration(0)
		if i == len(e.c.sizes)-1 {
			idle = e.c.idle
		}
		res, objs, err := e.lifecycle(ctx, runSpec{n: n, prefix: fmt.Sprintf("tiny-%d", n), idle: idle})
		if err != nil {
			return m, fmt.Errorf("%d VMI(s): %w", n, err)
		}
		f, err := runFloor(ctx, objs, image, floorSpec{tcgCacheMiB: e.c.tcgCacheMiB, timeout: e.c.startTimeout})
		if err != nil {
			return m, fmt.Errorf("floor for %d domain(s): %w", n, err)
		}
		pf, err := e.podFloors(ctx, n)
		if err != nil {
			return m, fmt.Errorf("Pod floor for %d Pod(s): %w", n, err)
		}
		m.runs, m.floors, m.podFloors = append(m.runs, res), append(m.floors, f), append(m.podFloors, pf)
		if i == 0 && e.c.altTCGCacheMiB > 0 {
			say("floor with a %d MiB TCG cache instead of %d", e.c.altTCGCacheMiB, e.c.tcgCacheMiB)
			alt, err := runFloor(ctx, objs, image, floorSpec{tcgCacheMiB: e.c.altTCGCacheMiB, timeout: e.c.startTimeout})
			if err != nil {
				return m, fmt.Errorf("floor with a %d MiB TCG cache: %w", e.c.altTCGCacheMiB, err)
			}
			m.altCache = &alt
		}
	}
	m.argsCompare = compareArgs(m.runs[0].QEMUArgs, m.floors[0].QEMUArgs)
	return m, nil
}

// preflight checks what the benchmark needs before it starts anything.
func preflight(c config) error {
	if os.Geteuid() != 0 {
		return errors.New("must run as root: vireo-local's nodes and the floor's network namespaces need it")
	}
	for _, bin := range []string{"kube-apiserver", "etcd", "vireo-apiserver", "vireo-controller", "vireo-nodeagent", "vireo-launcher", "vireo-local"} {
		if _, err := os.Stat(filepath.Join(c.bin, bin)); err != nil {
			return fmt.Errorf("%s not built: run `make build upstream`", bin)
		}
	}
	if _, err := os.Stat(filepath.Join(c.images, "tiny", "containerdisk")); err != nil {
		return fmt.Errorf("the test guest is not built: run `make images` (%v)", err)
	}
	if c.uiRuns > 0 {
		if !assets.Built() {
			return errors.New("the web console is not built into this binary: run `make ui` (or -ui-runs 0)")
		}
		for _, f := range []string{c.chromium, filepath.Join(c.web, "node_modules", "playwright-core")} {
			if _, err := os.Stat(f); err != nil {
				return fmt.Errorf("the web console phase needs %s: run `make deps ui` (or -ui-runs 0): %v", f, err)
			}
		}
		if _, err := exec.LookPath("node"); err != nil {
			return fmt.Errorf("the web console phase needs node: run `make deps` (or -ui-runs 0): %v", err)
		}
	}
	return nil
}

// cleanUp removes the installation and waits until no process of the benchmark is left. An
// installation that was never started may fail to stop: strict says whether that is an error.
func cleanUp(cluster *localcluster.Cluster, strict bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := cluster.Down(true)
	if !strict {
		err = nil
	}
	err = errors.Join(err, waitNoOwnProcesses(ctx, 20*time.Second))
	removeFloorLeftovers()
	return err
}

func newEnv(ctx context.Context, c config, cluster *localcluster.Cluster) (*env, error) {
	cl, err := newClients(cluster)
	if err != nil {
		return nil, err
	}
	if err := createNamespace(ctx, cl, benchNS); err != nil {
		return nil, err
	}
	// Launcher Pods need the namespace's default ServiceAccount, which arrives asynchronously.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cl.kube.CoreV1().ServiceAccounts(benchNS).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("namespace %s has no default ServiceAccount: %w", benchNS, err)
	}
	tmpl, err := vmiTemplate(filepath.Join(c.manifests, "examples", "vmi-tiny.yaml"), cluster.RegistryAddress())
	if err != nil {
		return nil, err
	}
	e := &env{c: c, cluster: cluster, cl: cl, scraper: &apimetrics.Scraper{Kube: cl.kube, Config: cl.cfg, Resources: countedResources}, template: tmpl}
	if _, err := e.scraper.Scrape(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// vmiTemplate reads the tiny example with its image in this installation's registry.
func vmiTemplate(file, registry string) (*v1.VirtualMachineInstance, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	manifest := strings.ReplaceAll(string(b), localcluster.DefaultNetwork().HostIP.String()+":5000", registry)
	var vmi v1.VirtualMachineInstance
	if err := yaml.UnmarshalStrict([]byte(manifest), &vmi); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(vmi.Spec.Volumes) == 0 || vmi.Spec.Volumes[0].ContainerDisk == nil || !strings.HasPrefix(vmi.Spec.Volumes[0].ContainerDisk.Image, registry) {
		return nil, fmt.Errorf("%s: expected a containerDisk from %s", file, registry)
	}
	return &vmi, nil
}

// containerDiskFile is the disk file of the tiny guest's containerDisk image (the floors boot
// the same bytes).
func (c config) containerDiskFile() string {
	return filepath.Join(c.images, "tiny", images.DiskQCOW2)
}
