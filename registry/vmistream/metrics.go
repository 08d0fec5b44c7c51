package vmistream

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Gauges of open sessions through this vireo-apiserver, by VMI (KubeVirt's names, served at
// vireo-apiserver's /metrics).
var (
	activeConnections = map[string]*metrics.GaugeVec{
		Console: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Name: "kubevirt_console_active_connections", Help: "Open serial console sessions of a VMI.", StabilityLevel: metrics.ALPHA,
		}, []string{"namespace", "vmi"}),
		VNC: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Name: "kubevirt_vnc_active_connections", Help: "Open VNC sessions of a VMI.", StabilityLevel: metrics.ALPHA,
		}, []string{"namespace", "vmi"}),
	}
	registerOnce sync.Once
)

// registerMetrics adds the gauges to the server's registry once.
func registerMetrics() {
	registerOnce.Do(func() {
		for _, g := range activeConnections {
			legacyregistry.MustRegister(g)
		}
	})
}

// track counts one session of kind on a VMI until the returned function is called.
func track(kind, namespace, name string) func() {
	g := activeConnections[kind].WithLabelValues(namespace, name)
	g.Inc()
	return g.Dec
}
