package nodeagent

import (
	"context"
	"fmt"
	"net"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/internal/podnetwork"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/networkhelper"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// PodNetwork sets up the masquerade binding of launcher Pods: it takes the Pod's network
// namespace from its launcher and has the node's network helper (in its own container, the one
// with network privilege) set it up. The agent itself never enters a namespace.
type PodNetwork struct {
	Dirs nodedirs.Dirs
	// HelperDir is the directory of the helper's socket ("": no helper; a VMI with an
	// interface then cannot start).
	HelperDir string
}

// SetUp sets up launcher Pod podUID's network for vmi; a VMI without a masquerade interface
// needs nothing. It is idempotent.
func (n PodNetwork) SetUp(ctx context.Context, podUID types.UID, vmi *v1.VirtualMachineInstance) error {
	req, err := podnetwork.ForVMI(vmi, int(launcherpodapi.LauncherUser))
	if err != nil || req == nil {
		return err
	}
	if n.HelperDir == "" {
		return fmt.Errorf("the VMI has a masquerade interface, and this node agent runs without a network helper (--network-helper-dir)")
	}
	conn, err := n.Dirs.DialSocket(ctx, podUID, protocol.NetworkSocket)
	if err != nil {
		return fmt.Errorf("reaching the launcher's network handover: %w", err)
	}
	defer conn.Close()
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("the launcher's network handover is not a unix socket")
	}
	ns, tun, err := podnetwork.ReceiveNamespace(uc)
	if err != nil {
		return err
	}
	defer ns.Close()
	if tun != nil {
		defer tun.Close()
	}
	if err := networkhelper.Configure(ctx, n.HelperDir, req, ns, tun); err != nil {
		return fmt.Errorf("setting up the Pod's network: %w", err)
	}
	return nil
}
