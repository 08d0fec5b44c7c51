package launcher

import (
	"fmt"
	"strings"

	"github.com/vireo-dev/vireo/launcher/domain"
)

// emulationRefusal says why the guest may not start on this node: it would run under software
// emulation (emu is TCG, for the detected reason) and the cluster's setting does not allow it.
// It returns "" when the guest may start: under KVM, or under TCG with emulation allowed.
func emulationRefusal(emu domain.Emulation, reason string, o *Options) string {
	if emu != domain.EmulationTCG || o.UseEmulation {
		return ""
	}
	node := "this node"
	if o.NodeName != "" {
		node = "node " + o.NodeName
	}
	source := o.UseEmulationSource
	if source == "" {
		source = "the cluster's settings"
	}
	why := strings.TrimPrefix(reason, "software emulation (TCG): ")
	return fmt.Sprintf("KVM is not available on %s (%s) and spec.configuration.developerConfiguration.useEmulation is false in %s: "+
		"set it to true to run guests under software emulation (QEMU TCG, much slower), or run the VMI on a node with KVM",
		node, why, source)
}
