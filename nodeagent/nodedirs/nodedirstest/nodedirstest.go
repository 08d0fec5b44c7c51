// Package nodedirstest makes node directories for the node agent's tests.
package nodedirstest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// New is a run directory and kubelet Pod directories below one short temporary root:
// t.TempDir's paths are too long for a socket address (108 bytes) in an emptyDir.
func New(t testing.TB) nodedirs.Dirs {
	t.Helper()
	base, err := os.MkdirTemp("", "na")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	d := nodedirs.Dirs{Root: filepath.Join(base, "r"), Pods: filepath.Join(base, "k")}
	if err := os.Mkdir(d.Pods, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// WithDeadlines is a run directory (no kubelet Pod directories) whose agent directory holds a
// shutdown deadline, a minute ahead and returned, for each of uids.
func WithDeadlines(t testing.TB, uids ...types.UID) (nodedirs.Dirs, time.Time) {
	t.Helper()
	d := nodedirs.Dirs{Root: t.TempDir()}
	if err := os.Mkdir(filepath.Join(d.Root, nodedirs.AgentDir), 0o700); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Minute).Truncate(time.Second)
	for _, uid := range uids {
		if err := d.SetDeadline(uid, at); err != nil {
			t.Fatal(err)
		}
	}
	return d, at
}

// EmptyDir creates Pod uid's emptyDir "run" below the kubelet's Pod directories, as the
// kubelet does, and returns its path.
func EmptyDir(t testing.TB, d nodedirs.Dirs, uid types.UID) string {
	t.Helper()
	dir := filepath.Join(d.Pods, protocol.EmptyDirPath(string(uid), launcherpodapi.RunDirVolumeName))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}
