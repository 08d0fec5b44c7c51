package nodedirs

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A guest's shutdown deadline (when its VMI's grace period ends and the agent destroys it) is
// kept in the agent directory, one file per launcher Pod, so that a restarted agent keeps it.

// deadlineSuffix ends the name of a deadline file, after the Pod's UID.
const deadlineSuffix = ".deadline"

// deadlineFile is where the shutdown deadline of launcher Pod uid is kept.
func (d Dirs) deadlineFile(uid types.UID) string {
	return filepath.Join(d.Root, AgentDir, string(uid)+deadlineSuffix)
}

// Deadline is the shutdown deadline of launcher Pod uid, if it has one.
func (d Dirs) Deadline(uid types.UID) (time.Time, bool) {
	if CheckUID(uid) != nil {
		return time.Time{}, false
	}
	data, err := os.ReadFile(d.deadlineFile(uid))
	if err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	return t, err == nil
}

// SetDeadline records the shutdown deadline of launcher Pod uid.
func (d Dirs) SetDeadline(uid types.UID, t time.Time) error {
	if err := CheckUID(uid); err != nil {
		return err
	}
	tmp := d.deadlineFile(uid) + ".tmp"
	if err := os.WriteFile(tmp, []byte(t.UTC().Format(time.RFC3339Nano)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, d.deadlineFile(uid))
}

// Deadlines lists the Pod UIDs that have a shutdown deadline.
func (d Dirs) Deadlines() ([]types.UID, error) {
	entries, err := os.ReadDir(filepath.Join(d.Root, AgentDir))
	if err != nil {
		return nil, err
	}
	var uids []types.UID
	for _, e := range entries {
		uid, ok := strings.CutSuffix(e.Name(), deadlineSuffix)
		if ok && e.Type().IsRegular() && CheckUID(types.UID(uid)) == nil {
			uids = append(uids, types.UID(uid))
		}
	}
	return uids, nil
}

// ClearDeadline forgets the shutdown deadline of launcher Pod uid.
func (d Dirs) ClearDeadline(uid types.UID) {
	if CheckUID(uid) == nil {
		_ = os.Remove(d.deadlineFile(uid))
	}
}
