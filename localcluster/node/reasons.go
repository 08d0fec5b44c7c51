package node

import "fmt"

// Waiting and terminated reasons a kubelet reports, so that users and tools that know a kubelet's
// vocabulary read vireo-local's Pods the same way.
const (
	// ReasonErrImagePull: the image is not one vireo-local can run.
	ReasonErrImagePull = "ErrImagePull"
	// ReasonInvalidImageName: the image reference cannot be parsed.
	ReasonInvalidImageName = "InvalidImageName"
	// ReasonImagePullBackOff: the image failed before and is retried after a back-off.
	ReasonImagePullBackOff = "ImagePullBackOff"
	// ReasonCrashLoopBackOff: the container exited and waits for its restart back-off.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonCreateContainerConfigError: the container's configuration (env, security) cannot be built.
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonContainerCreating: the container is about to start.
	ReasonContainerCreating = "ContainerCreating"
	// ReasonPodInitializing: the container waits for the Pod's init containers.
	ReasonPodInitializing = "PodInitializing"
	// ReasonCompleted: the container exited with code 0.
	ReasonCompleted = "Completed"
	// ReasonError: the container exited with a non-zero code.
	ReasonError = "Error"
	// ReasonOOMKilled: the container was killed for exceeding its memory limit.
	ReasonOOMKilled = "OOMKilled"
)

// ContainerError is why a container cannot start, with the kubelet-like reason its status shows
// (ErrImagePull, CreateContainerConfigError, ...) and a message for the user.
type ContainerError struct {
	// Reason is the container's waiting reason.
	Reason string
	// Message says what was wrong and what to do.
	Message string
}

// Error implements error.
func (e *ContainerError) Error() string { return e.Reason + ": " + e.Message }

// configError is a CreateContainerConfigError with a formatted message.
func configError(format string, args ...any) *ContainerError {
	return &ContainerError{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf(format, args...)}
}
