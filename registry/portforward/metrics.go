package portforward

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// activeTunnels counts open port-forward tunnels through this vireo-apiserver, by VMI
// (KubeVirt's name, served at vireo-apiserver's /metrics).
var (
	activeTunnels = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_portforward_active_tunnels", Help: "Open port-forward tunnels to a VMI.", StabilityLevel: metrics.ALPHA,
	}, []string{"namespace", "vmi"})
	registerOnce sync.Once
)

// registerMetrics adds the gauge to the server's registry once.
func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(activeTunnels) })
}

// track counts one tunnel to a VMI until the returned function is called.
func track(namespace, name string) func() {
	g := activeTunnels.WithLabelValues(namespace, name)
	g.Inc()
	return g.Dec
}
