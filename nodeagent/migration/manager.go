package migration

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/nodeagent/launchersession"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// Queue is the node agent's VMI queue, which a migration's steps requeue.
type Queue interface {
	EnqueueKey(key string)
	EnqueueAfter(key string, d time.Duration)
}

// Config is what the migrations of one node agent work with.
type Config struct {
	// Node is the agent's node; Address is where other node agents reach it (Address()).
	Node, Address string
	// Pods are the launcher Pods on the node.
	Pods corelisters.PodLister
	Dirs nodedirs.Dirs
	// Peers is the TLS between node agents (nil: no migrations between nodes).
	Peers *PeerTLS
	// Settings are the cluster's (nil: defaults of the launcher).
	Settings *clusterconfig.Config
	Sessions *launchersession.Registry
	Queue    Queue
	Now      func() metav1.Time
	// SetUpNetwork sets up a target launcher Pod's network before it prepares (nil: nothing
	// to set up).
	SetUpNetwork func(ctx context.Context, podUID types.UID, vmi *v1.VirtualMachineInstance) error
}

// Manager carries out one node agent's steps in the migrations from and to its node, each
// step once; the agent's VMI reconcile calls Sync.
type Manager struct {
	node, address string
	pods          corelisters.PodLister
	dirs          nodedirs.Dirs
	peers         *PeerTLS
	settings      *clusterconfig.Config
	sessions      *launchersession.Registry
	queue         Queue
	now           func() metav1.Time
	setUpNetwork  func(ctx context.Context, podUID types.UID, vmi *v1.VirtualMachineInstance) error

	// draining: the agent is exiting, no new migration starts (drain.go).
	draining atomic.Bool

	mu sync.Mutex
	// records are this agent's steps in live migrations, by migration UID.
	records map[types.UID]*record
}

// NewManager returns a manager without migrations.
func NewManager(c Config) *Manager {
	if c.Now == nil {
		c.Now = metav1.Now
	}
	if c.SetUpNetwork == nil {
		c.SetUpNetwork = func(context.Context, types.UID, *v1.VirtualMachineInstance) error { return nil }
	}
	return &Manager{node: c.Node, address: c.Address, pods: c.Pods, dirs: c.Dirs, peers: c.Peers, settings: c.Settings,
		sessions: c.Sessions, queue: c.Queue, now: c.Now, setUpNetwork: c.SetUpNetwork, records: map[types.UID]*record{}}
}
