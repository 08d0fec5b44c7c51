package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/test/bench/apimetrics"
	"github.com/vireo-dev/vireo/test/bench/crdbaseline"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// stallAfter is how long the VMIs of a wave may make no progress toward Running before the
// harness calls the control path stalled (a backlog of thousands can keep the first of a wave
// from Running for minutes); minRate is the slowest pace, in VMIs a second, a wave is given
// time for on top of that.
const (
	stallAfter = 5 * time.Minute
	minRate    = 10
)

// env is what every wave works with.
type env struct {
	c       config
	cluster *localcluster.Cluster
	cl      *clients
	nodes   []string
	tracker *tracker
	scraper *apimetrics.Scraper
	metrics *metricsScraper
	// component is KubeVirt's controller for the CRD baseline (webhook.ComponentUser).
	component dynamic.Interface
	// probeSeq numbers the fan-out probes across waves and targets.
	probeSeq int
	// restartsSoFar counts the restarts of Vireo's containers before the wave.
	restartsSoFar int
}

// restarts counts the restarts of every container of Vireo's Pods (vireo-system).
func (e *env) restarts(ctx context.Context) (int, error) {
	pods, err := e.cl.kube.CoreV1().Pods(v1.InstallNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			n += int(c.RestartCount)
		}
	}
	return n, nil
}

func run(ctx context.Context, c config) error {
	return withInstallation(ctx, c, func(cluster *localcluster.Cluster, cl *clients) (err error) {
		// The watches and simulations end before the installation is removed.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if err := createNamespaces(ctx, cl.kube, c.namespaces); err != nil {
			return err
		}
		if c.controllerWorkers > 0 {
			say("restarting vireo-controller with %d workers per loop", c.controllerWorkers)
			if err := setControllerWorkers(ctx, cl.kube, c.controllerWorkers); err != nil {
				return err
			}
		}
		metrics, err := newMetricsScraper(ctx, cl, namespaceName(0))
		if err != nil {
			return err
		}
		nodes, err := simulatedNodes(ctx, cl.kube, c)
		if err != nil {
			return err
		}
		e := &env{c: c, cluster: cluster, cl: cl, nodes: nodes, tracker: newTracker(), scraper: &apimetrics.Scraper{
			Kube: cl.kube, Config: cl.cfg, Resources: map[string]map[string]bool{"vireo-apiserver": {"virtualmachineinstances": true},
				"kube-apiserver": {"pods": true, "events": true, "subjectaccessreviews": true}}}, metrics: metrics}
		say("starting %d simulated node agents' watches", len(nodes))
		if err := startAgents(ctx, cl.cfg, nodes, e.tracker); err != nil {
			return err
		}
		if c.crd {
			wh, caBundle, err := crdbaseline.StartWebhook(cluster)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, wh.Close()) }()
			say("installing the CRD + webhook baseline (%s)", crdbaseline.Group)
			if err := crdbaseline.InstallCRD(ctx, cl.dyn, false); err != nil {
				return err
			}
			if err := crdbaseline.InstallWebhooks(ctx, cl.kube, cl.dyn, wh.URL(), caBundle, namespaceName(0)); err != nil {
				return err
			}
			if e.component, err = componentClient(ctx, cluster, cl); err != nil {
				return err
			}
		}
		return e.waves(ctx)
	})
}

// waves measures every size, writing the report after each, and stops at the first size where
// the control path broke.
func (e *env) waves(ctx context.Context) error {
	rep := report{Config: e.c.describe(), Started: time.Now()}
	prev := 0
	for _, size := range waves(e.c.vmis) {
		say("wave to %d VMIs", size)
		r := sizeResult{VMIs: size}
		wave := e.vireoWave
		if size > e.c.fullPath {
			wave = e.directWave
		}
		v, err := wave(ctx, prev, size)
		if err != nil {
			return errors.Join(err, rep.write(e.c.out))
		}
		r.Vireo = v
		// Vireo's figures are written before the baseline's wave, which may fail at a size
		// where Vireo did not.
		rep.Sizes = append(rep.Sizes, r)
		if err := rep.write(e.c.out); err != nil {
			return err
		}
		if e.c.crd {
			crd, err := e.crdWave(ctx, prev, size)
			if err != nil {
				return errors.Join(fmt.Errorf("the CRD baseline at %d VMIs: %w", size, err), rep.write(e.c.out))
			}
			rep.Sizes[len(rep.Sizes)-1].CRD = &crd
			if err := rep.write(e.c.out); err != nil {
				return err
			}
		}
		if v.Problem != "" {
			return fmt.Errorf("at %d VMIs: %s", size, v.Problem)
		}
		prev = size
	}
	return nil
}

// vireoWave creates Vireo's VMIs from..to-1, waits until the simulated node agents report
// every one Running, and measures.
func (e *env) vireoWave(ctx context.Context, from, to int) (targetResult, error) {
	var r targetResult
	requestsBefore, err := e.scraper.Scrape(ctx)
	if err != nil {
		return r, err
	}
	queuesBefore, err := e.metrics.controllerMetrics(ctx)
	if err != nil {
		return r, err
	}
	before, err := measureUsage(e.cluster)
	if err != nil {
		return r, err
	}
	keys := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		ns, name := vmiKey(i, e.c.namespaces)
		keys = append(keys, ns+"/"+name)
	}
	t0 := time.Now()
	cr, err := createRange(ctx, e.c, from, to, createVireo(e.cl, e.c), func(i int, at time.Time) { e.tracker.begin(keys[i-from], at) })
	if err != nil {
		return r, err
	}
	r.created(cr, to-from)
	say("  vireo: created %d VMIs at %.0f/s; waiting until they run", to-from, r.CreateThroughput)
	r.Problem = e.waitRunning(ctx, keys)
	wall := time.Since(t0)
	r.ToRunning = measure.Summarize(e.tracker.toRunning(keys), wall)
	r.NotRunning = len(keys) - r.ToRunning.Ops
	say("  vireo: %d Running, creation -> Running p50 %.1f s, p99 %.1f s", r.ToRunning.Ops, r.ToRunning.P50ms/1000, r.ToRunning.P99ms/1000)
	if err := e.measureSteps(ctx, &r, keys, to); err != nil {
		return r, err
	}

	requestsAfter, err := e.scraper.Scrape(ctx)
	if err != nil {
		return r, err
	}
	r.writes(requestsBefore, requestsAfter, to-from)
	queuesAfter, err := e.metrics.controllerMetrics(ctx)
	if err != nil {
		return r, err
	}
	r.Queues = queueLatencies(queuesBefore, queuesAfter)
	if r.Usage, err = measureUsage(e.cluster); err != nil {
		return r, err
	}
	r.Cores, r.HostBusy = cpuShares(before, r.Usage, wall)
	r.CPUPerVMIms, r.SustainedRate = cpuPerVMI(r.Cores, wall, to-from)
	if r.Restarts, err = e.restarts(ctx); err != nil {
		return r, err
	}
	if n := r.Restarts - e.restartsSoFar; n > 0 && r.Problem == "" {
		r.Problem = fmt.Sprintf("Vireo's components restarted %d time(s) during the wave (see their Pods' last state)", n)
	}
	e.restartsSoFar = r.Restarts
	node, err := e.nodeOfFirstVMI(ctx)
	if err != nil {
		return r, err
	}
	nodeQuery := url.Values{"fieldSelector": {"status.nodeName=" + node}}
	if err := e.measureLists(ctx, &r, withProtobuf(listCases("kubevirt.io", to, e.c.namespaces, nodeQuery))); err != nil {
		return r, err
	}
	return r, e.probe(ctx, &r, to, patchVireo(e.cl, e.c))
}

// measureSteps measures when the wave's VMIs passed each step to Running and plots it.
func (e *env) measureSteps(ctx context.Context, r *targetResult, keys []string, size int) error {
	tl, err := e.readTimeline(ctx, keys)
	if err != nil {
		return err
	}
	r.Steps = tl.latencies()
	for _, s := range r.Steps {
		say("    %-34s p50 %5.1f s, p90 %5.1f s, p99 %5.1f s after creation (%d VMIs)", s.Step, s.P50s, s.P90s, s.P99s, s.Count)
	}
	return tl.plot(timelineFile(e.c.out, size), size)
}

// nodeOfFirstVMI is the node of Vireo's VMI 0, whose VMIs the node list lists.
func (e *env) nodeOfFirstVMI(ctx context.Context) (string, error) {
	ns, name := vmiKey(0, e.c.namespaces)
	vmi, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return vmi.Status.NodeName, nil
}

// waitRunning polls until every VMI of keys was seen Running; it returns what went wrong when
// they stopped making progress for stallAfter.
func (e *env) waitRunning(ctx context.Context, keys []string) string {
	last, lastChange := -1, time.Now()
	deadline := time.Now().Add(stallAfter + time.Duration(len(keys)/minRate)*time.Second)
	var problem string
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		n := e.tracker.runningCount(keys)
		if n == len(keys) {
			return true, nil
		}
		if n != last {
			last, lastChange = n, time.Now()
		}
		switch failed := e.tracker.failures(keys); {
		case failed != "":
			problem = failed + "; " + e.whyNotRunning(ctx, keys)
		case time.Since(lastChange) > stallAfter:
			problem = fmt.Sprintf("the control path stalled: %d of %d VMIs Running, none more for %s; %s", n, len(keys), stallAfter, e.whyNotRunning(ctx, keys))
		case time.Now().After(deadline):
			problem = fmt.Sprintf("slower than %d VMIs a second: %d of %d VMIs Running at the deadline; %s", minRate, n, len(keys), e.whyNotRunning(ctx, keys))
		default:
			return false, nil
		}
		return true, nil
	})
	if problem == "" && ctx.Err() != nil {
		problem = fmt.Sprintf("interrupted with %d of %d VMIs Running", e.tracker.runningCount(keys), len(keys))
	}
	return problem
}

// crdWave creates the CRD baseline's VMIs from..to-1 and measures.
func (e *env) crdWave(ctx context.Context, from, to int) (targetResult, error) {
	var r targetResult
	cr, err := createRange(ctx, e.c, from, to, createCRD(e.cl, e.c), func(int, time.Time) {})
	if err != nil {
		return r, err
	}
	r.created(cr, to-from)
	say("  crd: created %d VMIs at %.0f/s", to-from, r.CreateThroughput)
	template, err := runningStatus(ctx, e.cl, e.c)
	if err != nil {
		return r, err
	}
	sched, err := createRange(ctx, e.c, from, to, scheduleCRD(e.component, e.c, e.nodes, template), func(int, time.Time) {})
	if err != nil {
		return r, fmt.Errorf("writing the CRD VMIs' node label and status: %w", err)
	}
	say("  crd: wrote their node label and Running status as KubeVirt's controller at %.0f/s", float64(to-from)/sched.wall.Seconds())
	if r.Usage, err = measureUsage(e.cluster); err != nil {
		return r, err
	}
	nodeQuery := url.Values{"labelSelector": {v1.NodeNameLabel + "=" + e.nodes[0]}}
	if err := e.measureLists(ctx, &r, listCases(crdbaseline.Group, to, e.c.namespaces, nodeQuery)); err != nil {
		return r, err
	}
	stop, err := watchCRDNodes(ctx, e.cl.cfg, e.nodes, e.tracker.probes)
	if err != nil {
		return r, err
	}
	defer stop()
	return r, e.probe(ctx, &r, to, patchCRD(e.cl, e.c))
}

// probe sends the next c.probes fan-out probes over the vmis VMIs with patch and records them.
func (e *env) probe(ctx context.Context, r *targetResult, vmis int, patch func(ctx context.Context, i int, body []byte) error) error {
	first := e.probeSeq
	e.probeSeq += e.c.probes
	writeLat, err := probeFanout(ctx, e.tracker.probes, first, e.c.probes, vmis, patch)
	if err != nil {
		return err
	}
	r.fanout(e.tracker.probes, first, e.c.probes, writeLat)
	return nil
}
