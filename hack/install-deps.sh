#!/usr/bin/env bash
# Installs the system packages Vireo's tests need, idempotently: git; iproute2 and
# util-linux (ip, nsenter) for the network namespaces of vireo-local's nodes and Pods; the
# standard CNI plugins (bridge, host-local, loopback) for Pod networking; iptables for
# kube-proxy; libvirt (libvirtd, virsh, virt-xml-validate with xmllint), QEMU (system
# emulator, qemu-img, qemu-io, NIC boot ROMs) and genisoimage (cloud-init ISOs, isoinfo) for the
# launcher. Later features (guest images) add here.
set -euo pipefail
need=()
for pkg in git iproute2 util-linux ca-certificates containernetworking-plugins iptables nftables \
  libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libxml2-utils qemu-system-x86 qemu-utils ipxe-qemu genisoimage; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
