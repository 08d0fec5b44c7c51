// Package clusterconfig gives vireo-controller and the node agents the installation's
// effective settings: those of the one KubeVirt object in vireo-system, read from an informer so
// that `kubectl patch kubevirt` takes effect without restarting anything, with KubeVirt's
// defaults for whatever it leaves out, and KubeVirt's defaults alone while there is none.
package clusterconfig

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	coreinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	corelisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
)

// NoObjectSource is the Source of the settings while no KubeVirt object exists.
const NoObjectSource = "KubeVirt's defaults (there is no KubeVirt object in " + v1.InstallNamespace + ")"

// Settings are the effective settings and where they come from.
type Settings struct {
	defaults.KubeVirtSettings
	// Source names the KubeVirt object ("KubeVirt vireo-system/kubevirt"), or is NoObjectSource.
	Source string
	// Object is the KubeVirt object the settings come from; nil when there is none. It belongs
	// to the informer's cache: read it, never change it.
	Object *v1.KubeVirt
}

// Config reads the settings from an informer of KubeVirt objects. It is safe for concurrent use.
type Config struct {
	lister   corelisters.KubeVirtLister
	informer cache.SharedIndexInformer
	synced   cache.InformerSynced
	// changed receives a value (without blocking) whenever a KubeVirt object changes.
	changed chan struct{}

	mu sync.Mutex
	// logged is what was last logged about the settings' origin, so each change is logged once.
	logged string
}

// New returns a Config on informer, which should list vireo-system only (the only namespace a
// KubeVirt object may be in); the caller starts it.
func New(informer coreinformers.KubeVirtInformer) (*Config, error) {
	c := &Config{lister: informer.Lister(), informer: informer.Informer(), synced: informer.Informer().HasSynced, changed: make(chan struct{}, 1)}
	notify := func(any) {
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	})
	if err != nil {
		return nil, fmt.Errorf("watching KubeVirt objects: %w", err)
	}
	return c, nil
}

// OnChange calls f whenever a KubeVirt object is added, changed or deleted.
func (c *Config) OnChange(f func()) error {
	_, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { f() },
		UpdateFunc: func(_, _ any) { f() },
		DeleteFunc: func(any) { f() },
	})
	return err
}

// HasSynced reports whether the informer has listed the KubeVirt objects once; before that, Get
// would answer KubeVirt's defaults whatever the object says.
func (c *Config) HasSynced() bool { return c.synced() }

// Get returns the current settings. It logs a change of their origin (or generation) once.
func (c *Config) Get() Settings {
	kv, others := c.current()
	if kv == nil {
		c.logOnce(NoObjectSource, func() {
			klog.InfoS("No KubeVirt object in the installation's namespace: KubeVirt's defaults apply", "namespace", v1.InstallNamespace)
		})
		return Settings{KubeVirtSettings: defaults.KubeVirtSettingsOf(nil), Source: NoObjectSource}
	}
	s := Settings{KubeVirtSettings: defaults.KubeVirtSettingsOf(kv), Source: "KubeVirt " + kv.Namespace + "/" + kv.Name, Object: kv}
	c.logOnce(fmt.Sprintf("%s generation %d", s.Source, kv.Generation), func() {
		klog.InfoS("Cluster settings", "kubevirt", klog.KObj(kv), "generation", kv.Generation,
			"useEmulation", s.UseEmulation, "migrations", fmt.Sprintf("%+v", s.Migrations))
		if len(others) > 0 {
			klog.InfoS("More than one KubeVirt object: following the oldest, ignoring the others", "kubevirt", klog.KObj(kv), "ignored", others)
		}
	})
	return s
}

// EmulationSetting is the cluster's software-emulation setting as a new launcher Pod receives it:
// spec.configuration.developerConfiguration.useEmulation of the KubeVirt object, with KubeVirt's
// default (false) when there is none. A running launcher keeps the setting it started with.
type EmulationSetting struct {
	// Allowed lets the guest run under QEMU TCG on a node without usable KVM.
	Allowed bool
	// Source names the setting's origin, such as "KubeVirt vireo-system/kubevirt".
	Source string
}

// Emulation is the software-emulation setting for a new launcher Pod (launcherpod.Options).
func (c *Config) Emulation() EmulationSetting {
	s := c.Get()
	return EmulationSetting{Allowed: s.UseEmulation, Source: s.Source}
}

// current returns the KubeVirt object the settings come from, the oldest when there are several
// (vireo-apiserver refuses a second one, but two created at the same instant can both pass), and
// the names of the others.
func (c *Config) current() (*v1.KubeVirt, []string) {
	kvs, err := c.lister.KubeVirts(v1.InstallNamespace).List(labels.Everything())
	if err != nil || len(kvs) == 0 {
		return nil, nil
	}
	slices.SortFunc(kvs, func(a, b *v1.KubeVirt) int {
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return strings.Compare(a.Name, b.Name)
		}
		if a.CreationTimestamp.Before(&b.CreationTimestamp) {
			return -1
		}
		return 1
	})
	var others []string
	for _, o := range kvs[1:] {
		others = append(others, o.Name)
	}
	return kvs[0], others
}

// logOnce runs log when key differs from the last key logged.
func (c *Config) logOnce(key string, log func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logged == key {
		return
	}
	c.logged = key
	log()
}
