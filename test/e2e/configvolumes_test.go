package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// configVolumesScript is the config drive's user-data: it prints the volume label of each
// virtio disk that has a serial number (an ISO 9660 volume identifier: 32 bytes at 32808; the
// guest's busybox has no blkid), mounts it at /mnt/<serial>, then prints what it reads on each.
const configVolumesScript = `#!/bin/sh
for d in /sys/block/vd*; do
	s=$(cat $d/serial 2>/dev/null); [ -n "$s" ] || continue
	echo "DISK $s $(dd if=/dev/${d##*/} bs=1 skip=32808 count=32 2>/dev/null | tr -d ' ')"
	grep -q " /mnt/$s " /proc/mounts || { mkdir -p /mnt/$s && mount -t iso9660 -o ro /dev/${d##*/} /mnt/$s; }
done
echo "DRIVE $(hostname) $(cat /mnt/config-2/openstack/latest/network_data.json)"
echo "CM $(cat /mnt/cm/greeting) $(cat /mnt/cm/color)"
echo "SEC $(cat /mnt/sec/password)"
echo "SA $(cat /mnt/sa/namespace) $(head -c 3 /mnt/sa/token) $(grep -c 'BEGIN CERTIFICATE' /mnt/sa/ca.crt)"
echo "DOWN $(cat /mnt/down/meta/app) $(cat /mnt/down/cpu)"
echo "OPTIONAL $(ls -A /mnt/opt | wc -l) files"
`

// TestConfigVolumes: in a namespace enforcing Pod Security baseline, a VMI's
// cloudInitConfigDrive (user-data, meta_data.json's hostname, networkDataBase64 decoded), and
// its configMap, secret, serviceAccount and downwardAPI volumes reach the guest as disks with
// KubeVirt's labels ("cfgdata" unless volumeLabel says otherwise) and files (one per key; the
// ServiceAccount's namespace, token and ca.crt; the downward API's fields of the launcher Pod,
// which carries the VMI's labels), each found by the serial its disk gives; an optional Secret
// that does not exist is an empty disk, a missing ConfigMap is named on the VMI (FailedMount).
func TestConfigVolumes(t *testing.T) {
	t.Parallel()
	ns := baselineNamespace(t)
	network := `{"links":[],"networks":[],"services":[]}`
	kubectl(t, "-n", ns, "create", "configmap", "app", "--from-literal=greeting=hello", "--from-literal=color=teal")
	kubectl(t, "-n", ns, "create", "secret", "generic", "db", "--from-literal=password=hunter2")
	kubectl(t, "-n", ns, "create", "serviceaccount", "robot")
	manifest := fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: configs
  labels: {app: shop}
spec:
  hostname: drivehost
  terminationGracePeriodSeconds: 5
  domain:
    resources: {requests: {memory: 128Mi, cpu: 100m}, limits: {cpu: "2"}}
    devices:
      disks:
        - {name: containerdisk, disk: {bus: virtio}}
        - {name: configdrive, serial: config-2, disk: {bus: virtio}}
        - {name: cm, serial: cm, disk: {bus: virtio}}
        - {name: sec, serial: sec, disk: {bus: virtio}}
        - {name: sa, serial: sa, disk: {bus: virtio}}
        - {name: down, serial: down, disk: {bus: virtio}}
        - {name: opt, serial: opt, disk: {bus: virtio}}
  volumes:
    - name: containerdisk
      containerDisk: {image: %s, imagePullPolicy: IfNotPresent}
    - name: configdrive
      cloudInitConfigDrive:
        userDataBase64: %s
        networkDataBase64: %s
    - name: cm
      configMap: {name: app, volumeLabel: appcfg}
    - name: sec
      secret: {secretName: db}
    - name: sa
      serviceAccount: {serviceAccountName: robot}
    - name: down
      downwardAPI:
        volumeLabel: facts
        fields:
          - {path: meta/app, fieldRef: {fieldPath: "metadata.labels['app']"}}
          - {path: cpu, resourceFieldRef: {resource: limits.cpu, divisor: 1m}}
    - name: opt
      secret: {secretName: absent, optional: true}
`, cluster.ContainerDiskImage("tiny"), base64.StdEncoding.EncodeToString([]byte(configVolumesScript)),
		base64.StdEncoding.EncodeToString([]byte(network)))
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, manifest))
	con := openConsole(t, ns, "configs")
	for _, want := range []string{
		"DISK config-2 config-2", "DISK cm appcfg", "DISK sec cfgdata", "DISK sa cfgdata", "DISK down facts",
		"DRIVE drivehost " + network,
		"CM hello teal",
		"SEC hunter2",
		"SA " + ns + " eyJ 1",
		"DOWN shop 2000",
		"OPTIONAL 0 files",
	} {
		con.waitFor(t, want, 120*time.Second)
	}
	kubectl(t, "-n", ns, "delete", "vmi", "configs", "--wait=false")

	missing := strings.Replace(manifest, "name: configs", "name: missing", 1)
	missing = strings.Replace(missing, "configMap: {name: app,", "configMap: {name: no-such-config,", 1)
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, missing))
	waitVMI(t, ns, "missing", 60*time.Second, "Ready False FailedMount naming the ConfigMap", func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstanceReady)
		return v.Status.Phase == v1.Scheduling && c != nil && c.Reason == "FailedMount" && strings.Contains(c.Message, `"no-such-config"`)
	})
}
