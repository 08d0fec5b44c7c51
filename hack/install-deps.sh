#!/usr/bin/env bash
# Installs the system packages Vireo's tests need, idempotently: git; iproute2 and
# util-linux (ip, nsenter) for the network namespaces of vireo-local's nodes and Pods; the
# standard CNI plugins (bridge, host-local, loopback) for Pod networking; iptables for
# kube-proxy; libvirt and QEMU (session libvirtd, TCG guests) for the launcher; and the tools
# the test guest images are made with (test/images): qemu-utils (qemu-img), dosfstools and
# mtools (the FAT boot disk, no loop mount), syslinux (its boot loader), genisoimage (NoCloud
# seeds). The guest's own packages (kernel, busybox-static) are downloaded, never installed.
set -euo pipefail
need=()
for pkg in git iproute2 util-linux ca-certificates containernetworking-plugins iptables nftables \
  libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients qemu-system-x86 qemu-utils \
  dosfstools mtools syslinux syslinux-common genisoimage; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
