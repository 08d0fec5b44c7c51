package launcherpod

import v1 "github.com/vireo-dev/vireo/apis/core/v1"

// CurrentPodName is the name of the launcher Pod the VMI runs in now: the target Pod of its
// last migration once that migration completed, the source Pod of a migration that is in
// flight or failed (the guest is still there), and the VMI's own first launcher Pod when it
// was never migrated. The VMI controller follows this Pod; the node agents use it to tell the
// VMI's current launcher from a migration's other one.
func CurrentPodName(vmi *v1.VirtualMachineInstance) string {
	if s := vmi.Status.MigrationState; s != nil {
		if s.Completed && !s.Failed && s.TargetPod != "" {
			return s.TargetPod
		}
		if s.SourcePod != "" {
			return s.SourcePod
		}
	}
	return PodName(vmi.Name, string(vmi.UID))
}
