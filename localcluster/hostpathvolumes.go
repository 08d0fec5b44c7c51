package localcluster

import (
	"context"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// hostPathVolumesDir is where kube-controller-manager's hostPath provisioner (the default
// StorageClass local-hostpath) makes each claim's volume: /tmp/hostpath_pv/<uuid>, mode 0750,
// owned by root. The kubelet applies no fsGroup to hostPath volumes, so a Pod that runs as a
// user (the importer and the launcher, as uid 107) could not write its claim.
const hostPathVolumesDir = "/tmp/hostpath_pv"

// openHostPathVolumes gives every user write access to the claims' hostPath volumes as they
// are made (inotify; the directories there already are opened first), as KubeVirt's
// hostpath-provisioner makes its volumes: vireo-local's storage is for one machine's tests and
// demos, where every Pod's user must be able to use a claim. It returns when ctx ends.
func openHostPathVolumes(ctx context.Context) {
	if err := os.MkdirAll(hostPathVolumesDir, 0o755); err != nil {
		klog.ErrorS(err, "cannot prepare the hostPath volumes' directory", "dir", hostPathVolumesDir)
		return
	}
	_ = os.Chmod(hostPathVolumesDir, 0o755)
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		klog.ErrorS(err, "inotify")
		return
	}
	f := os.NewFile(uintptr(fd), "inotify")
	defer f.Close()
	if _, err := unix.InotifyAddWatch(fd, hostPathVolumesDir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR); err != nil {
		klog.ErrorS(err, "cannot watch the hostPath volumes' directory", "dir", hostPathVolumesDir)
		return
	}
	openAll := func() {
		entries, _ := os.ReadDir(hostPathVolumesDir)
		for _, e := range entries {
			openVolumeDir(filepath.Join(hostPathVolumesDir, e.Name()))
		}
	}
	openAll()
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	buf := make([]byte, 64*1024)
	for {
		if _, err := f.Read(buf); err != nil {
			return // closed: ctx ended
		}
		openAll() // the events name the new directories; opening all is as cheap and never misses one
	}
}

// openVolumeDir makes a volume directory the provisioner made (root's, 0750) writable by all.
func openVolumeDir(dir string) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() == 0o777 {
		return
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		klog.ErrorS(err, "cannot open a hostPath volume to the Pods' users", "dir", dir)
		return
	}
	klog.InfoS("opened a hostPath volume to the Pods' users", "dir", dir)
}
