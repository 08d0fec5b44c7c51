package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodSpecOnLocalNodes runs one Pod that uses what Vireo's manifests and users rely on:
// an init container, runAsUser, env from values, fieldRef, Secret and ConfigMap keys and
// envFrom, and emptyDir, hostPath, PVC, secret, configMap, downwardAPI and projected
// volumes at their mount paths; then checks each from inside the container with kubectl exec.
func TestPodSpecOnLocalNodes(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: %[1]s}
stringData: {password: s3cret}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {mode: fast, LEVEL: "7"}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: disk, namespace: %[1]s}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: features, namespace: %[1]s, labels: {tier: test}}
spec:
  terminationGracePeriodSeconds: 1
  securityContext:
    runAsUser: 1000
    runAsGroup: 3000
    fsGroup: 2000
    sysctls: [{name: net.ipv4.ip_unprivileged_port_start, value: "80"}]
  initContainers:
  - name: init
    image: %[2]s
    command: [/agnhost]
    args: [connect, "10.96.0.1:443", --timeout=5s]
  containers:
  - name: main
    image: %[2]s
    args: [netexec, --http-port=8080]
    workingDir: /work
    env:
    - {name: GREETING, value: hello}
    - {name: ECHO, value: "$(GREETING) world"}
    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: creds, key: password}}}
    - {name: MODE, valueFrom: {configMapKeyRef: {name: settings, key: mode}}}
    envFrom: [{configMapRef: {name: settings}, prefix: CFG_}]
    volumeMounts:
    - {name: work, mountPath: /work}
    - {name: host, mountPath: /mnt/host}
    - {name: disk, mountPath: /mnt/disk}
    - {name: secret, mountPath: /etc/creds}
    - {name: config, mountPath: /etc/settings}
    - {name: info, mountPath: /etc/podinfo}
    - {name: all, mountPath: /etc/all}
  volumes:
  - {name: work, emptyDir: {}}
  - {name: host, hostPath: {path: /var/lib/vireo/e2e-hostpath, type: DirectoryOrCreate}}
  - {name: disk, persistentVolumeClaim: {claimName: disk}}
  - {name: secret, secret: {secretName: creds}}
  - {name: config, configMap: {name: settings, items: [{key: mode, path: the-mode}]}}
  - name: info
    downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}, {path: name, fieldRef: {fieldPath: metadata.name}}]}
  - name: all
    projected:
      sources:
      - secret: {name: creds}
      - serviceAccountToken: {path: token, expirationSeconds: 3600}
`, ns, agnhost)
	kubectl(t, "apply", "-f", manifestFile(t, manifest))
	waitPodsReady(t, ns, "features")
	sh := func(script string) string {
		return strings.TrimSpace(kubectl(t, "-n", ns, "exec", "features", "-c", "main", "--", "sh", "-c", script))
	}
	checks := []struct{ script, want string }{
		{"id -u; id -G", "1000\n3000 2000"},
		{"pwd", "/work"},
		{`echo "$ECHO|$PASSWORD|$MODE|$CFG_LEVEL|$CFG_mode"`, "hello world|s3cret|fast|7|fast"},
		{"echo $NODE", cluster.NodeNames()[0] + "|" + cluster.NodeNames()[1]},
		{"cat /etc/creds/password", "s3cret"},
		{"cat /etc/settings/the-mode; echo; ls /etc/settings", "fast\nthe-mode"},
		{"cat /etc/podinfo/name; echo; cat /etc/podinfo/labels", "features\ntier=\"test\""},
		{"cat /etc/all/password; echo; test -s /etc/all/token && echo token", "s3cret\ntoken"},
		{"touch /work/x && ls /work", "x"},
		// The claim's PersistentVolume directory (the host path provisioner's) is mounted there.
		{"stat -c %i /mnt/disk", diskInode(t, ns)},
		{"touch /etc/creds/z 2>/dev/null || echo read-only", "read-only"},
		{"cat /proc/sys/net/ipv4/ip_unprivileged_port_start", "80"},
		// The kubelet-managed hosts file names the Pod at its own address.
		{`grep -c "^10\.[0-9.]*	features$" /etc/hosts`, "1"},
	}
	for _, c := range checks {
		got := sh(c.script)
		if c.script == "echo $NODE" {
			if !strings.Contains(c.want, got) || got == "" {
				t.Errorf("%s = %q, want one of the nodes", c.script, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s = %q, want %q", c.script, got, c.want)
		}
	}
	// A hostPath volume is the path under the node's own directory (nodes never share one;
	// on kubelet nodes, /var/lib/vireo is one of the node's own directories).
	node := kubectl(t, "-n", ns, "get", "pod", "features", "-o", "jsonpath={.spec.nodeName}")
	hostDir := filepath.Join(cluster.Options().NodeDir(node), "host", "var", "lib", "vireo", "e2e-hostpath")
	if got, want := sh("stat -c %i /mnt/host"), inode(t, hostDir); got != want {
		t.Errorf("/mnt/host is inode %s, the node's %s is %s", got, hostDir, want)
	}
	// The init container ran to completion first.
	out := kubectl(t, "-n", ns, "get", "pod", "features", "-o", "jsonpath={.status.initContainerStatuses[0].state.terminated.reason}")
	if out != "Completed" {
		t.Errorf("init container state: %q, want Completed", out)
	}
}

// diskInode is the inode number of the directory behind a claim's PersistentVolume, as stat
// prints it: the Pod's mount must show that very directory.
func diskInode(t *testing.T, ns string) string {
	t.Helper()
	return inode(t, claimDir(t, ns, "disk"))
}

// claimDir waits until a claim is bound and returns its hostPath PersistentVolume's directory.
func claimDir(t *testing.T, ns, claim string) string {
	t.Helper()
	var path string
	eventually(t, "the claim is bound", func() error {
		pvc, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), claim, metav1.GetOptions{})
		if err != nil || pvc.Spec.VolumeName == "" {
			return fmt.Errorf("claim not bound: %v", err)
		}
		pv, err := kube.CoreV1().PersistentVolumes().Get(t.Context(), pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil || pv.Spec.HostPath == nil {
			return fmt.Errorf("volume %s: %v", pvc.Spec.VolumeName, err)
		}
		path = pv.Spec.HostPath.Path
		return nil
	})
	return path
}

func inode(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatUint(st.Ino, 10)
}

// TestResourceLimitsAreEnforced: a Pod's memory limit holds for what runs in it, kubectl exec
// included: a command allocating past it is killed, and the container itself keeps running.
func TestResourceLimitsAreEnforced(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "apply", "-f", manifestFile(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: limited, namespace: %s}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: %s
    args: [netexec, --http-port=8080]
    resources: {limits: {memory: 128Mi, cpu: 200m}}
`, ns, agnhost)))
	waitPodsReady(t, ns, "limited")
	// The shell grows far past netexec (~20 MiB), so the kernel's OOM killer picks it.
	_, _, err := kubectlResult("-n", ns, "exec", "limited", "--", "sh", "-c", `x=$(head -c 1073741824 /dev/zero | tr '\0' a); echo survived`)
	exitErr, ok := err.(*exec.ExitError)
	if !ok || exitErr.ExitCode() != 137 {
		t.Fatalf("allocating 1 GiB in a Pod limited to 128 MiB: %v, want exit code 137 (killed)", err)
	}
	p := waitPodsReady(t, ns, "limited")["limited"]
	if cs := p.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.State.Running == nil {
		t.Errorf("the container should run on untouched: %+v", cs)
	}
}
