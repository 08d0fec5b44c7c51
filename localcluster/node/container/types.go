package container

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Spec is what the node decided about one container: the binary an image maps to, its command,
// environment, identity, network namespace and volumes.
type Spec struct {
	// Path is the binary to exec. A name without a slash is looked up in the PATH of Env.
	Path string `json:"path"`
	// Args are the arguments after argv[0] (argv[0] is Path).
	Args []string `json:"args,omitempty"`
	// Env is the complete environment, as KEY=VALUE.
	Env []string `json:"env,omitempty"`
	// WorkingDir is the directory the process starts in; "" means "/".
	WorkingDir string `json:"workingDir,omitempty"`
	// UID and GID, when set, are the credentials the process runs with (runAsUser, runAsGroup).
	// A UID without a GID keeps group 0, as a container whose image has no passwd entry does.
	UID *int64 `json:"uid,omitempty"`
	GID *int64 `json:"gid,omitempty"`
	// SupplementalGroups replace the caller's groups whenever UID, GID or this is set.
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty"`
	// Resources are the limits enforced with cgroups.
	Resources Resources `json:"resources,omitempty"`
	// NoNewPrivileges sets the no_new_privs bit, so setuid binaries and file capabilities grant
	// nothing (allowPrivilegeEscalation: false); Exec applies it too.
	NoNewPrivileges bool `json:"noNewPrivileges,omitempty"`
	// Hostname is set in the container's own UTS namespace; "" keeps the host's name.
	Hostname string `json:"hostname,omitempty"`
	// Netns is the path of the Pod's network namespace (e.g. /run/netns/NAME); "" inherits the
	// caller's.
	Netns string `json:"netns,omitempty"`
	// Mounts are bind mounts made in the container's mount namespace, in order.
	Mounts []Mount `json:"mounts,omitempty"`
	// LogFile receives the container's stdout and stderr as CRI log lines (appended, 0640).
	LogFile string `json:"logFile"`
}

// Mount makes a host path (a volume) appear at Target inside the container only.
type Mount struct {
	// Source is the host path to bind. Without Beneath the node chose it, so it is trusted.
	Source string `json:"source"`
	// Beneath, when set, is a trusted directory Source lies in, while the part of Source below
	// it comes from a Pod (a subPath, a hostPath's path) and may meet symlinks a container
	// planted: that part is resolved beneath Beneath without following any symlink.
	Beneath string `json:"beneath,omitempty"`
	// Target is the absolute path inside the container (from the Pod spec, so untrusted: it must
	// be absolute, free of "..", and no existing component of it may be a symlink).
	Target string `json:"target"`
	// ReadOnly makes the whole mounted tree read-only.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// State is what the shim records once the container's binary runs.
type State struct {
	// Pid is the container's process id, also its process group id.
	Pid int `json:"pid"`
	// StartTicks is field 22 of /proc/Pid/stat: with Pid it names the process across pid reuse.
	StartTicks uint64 `json:"startTicks"`
	// StartedAt is when the binary was exec'd.
	StartedAt time.Time `json:"startedAt"`
	// CreatedPaths are the mount targets Start had to create on the host, parents first, so the
	// caller can remove them at teardown (RemoveCreatedPaths).
	CreatedPaths []string `json:"createdPaths,omitempty"`
	// ShimPid and ShimStartTicks name the shim, so Inspect can tell an exit about to be recorded
	// from a shim that was killed.
	ShimPid        int    `json:"shimPid"`
	ShimStartTicks uint64 `json:"shimStartTicks"`
}

// Exit is how the container's process ended.
type Exit struct {
	// Code is the exit status; 128+signal when killed by a signal; -1 when unknown.
	Code int `json:"exitCode"`
	// Signal is the number of the signal that killed the process, 0 if none.
	Signal int `json:"signal"`
	// Reason is "Completed" for code 0, "Error" otherwise, and "Unknown" when the shim died
	// before it could record the exit.
	Reason string `json:"reason"`
	// FinishedAt is when the exit was observed.
	FinishedAt time.Time `json:"finishedAt"`
}

// Status is a container's observed state: State is nil until the binary runs; Exit is nil while
// it runs.
type Status struct {
	State   *State
	Exit    *Exit
	Running bool
}

// LogOptions are the options of `kubectl logs` that a node honours.
type LogOptions struct {
	// Tail, when set, starts at the last Tail messages.
	Tail *int64
	// LimitBytes, when set, stops after that many bytes of output.
	LimitBytes *int64
	// Timestamps prefixes each message with its RFC3339Nano time and a space.
	Timestamps bool
	// SinceTime, when set, skips messages logged before it.
	SinceTime *time.Time
	// Follow keeps reading as the log grows, until the context ends or the container has exited
	// and the file is drained.
	Follow bool
}

// TermSize is a terminal's size in characters.
type TermSize struct {
	Width, Height uint16
}

// ExecRequest is one `kubectl exec`: the command and its streams.
type ExecRequest struct {
	Command []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	// TTY runs the command on a pseudo-terminal; its output goes to Stdout (Stderr is unused).
	TTY bool
	// Resize, when TTY is set, delivers the client's terminal size changes.
	Resize <-chan TermSize
}

// Files under a container's directory.
const (
	specFile       = "spec.json"
	stateFile      = "state.json"
	exitFile       = "exit.json"
	startErrorFile = "start-error"
)

// initConfig is the file node-init reads: the Spec plus what only the machinery needs.
type initConfig struct {
	Spec Spec `json:"spec"`
	// Self is the shim binary (vireo-local-shim), re-executed as node-init.
	Self string `json:"self"`
	// CreatedPaths are copied into state.json by the shim.
	CreatedPaths []string `json:"createdPaths,omitempty"`
	// CgroupProcsFDs are descriptors of the container's cgroup.procs files an exec'd command
	// writes itself into before it execs (the cgroup file systems are not visible in the
	// container's namespaces).
	CgroupProcsFDs []int `json:"cgroupProcsFDs,omitempty"`
}

// writeJSONAtomic writes v to path through a temporary file and a rename, so readers see either
// nothing or the whole file.
func writeJSONAtomic(path string, v any, perm os.FileMode) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, b, perm)
}

// writeFileAtomic writes b to path through a temporary file in the same directory and a rename.
func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readJSON reads path into v; a missing file returns false and no error.
func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	return true, nil
}
