package launcherpod

import "strconv"

// Launcher arguments and environment that carry the cluster's emulation setting and the node.
const (
	// UseEmulationFlag tells the launcher whether its guest may run under software emulation
	// when the node has no usable KVM.
	UseEmulationFlag = "--use-emulation"
	// UseEmulationSourceFlag names where the setting comes from, for the launcher's refusal.
	UseEmulationSourceFlag = "--use-emulation-source"
	// NodeNameEnv is the launcher's node (spec.nodeName, through the downward API), for its
	// refusal to run a guest under emulation.
	NodeNameEnv = "NODE_NAME"
)

// EmulationSetting is the cluster's software-emulation setting as a new launcher Pod receives it:
// spec.configuration.developerConfiguration.useEmulation of the KubeVirt object, with KubeVirt's
// default (false) when there is none. A running launcher keeps the setting it started with.
type EmulationSetting struct {
	// Allowed lets the guest run under QEMU TCG on a node without usable KVM.
	Allowed bool
	// Source names the setting's origin, such as "KubeVirt vireo-system/kubevirt".
	Source string
}

// emulationArgs are the launcher's arguments for the emulation setting of opts; none when opts
// has no setting (the launcher then allows emulation, as launchers did before the setting).
func emulationArgs(opts Options) []string {
	if opts.Emulation == nil {
		return nil
	}
	e := opts.Emulation()
	return []string{UseEmulationFlag + "=" + strconv.FormatBool(e.Allowed), UseEmulationSourceFlag + "=" + e.Source}
}
