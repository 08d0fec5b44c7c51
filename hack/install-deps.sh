#!/usr/bin/env bash
# Installs the system packages Vireo's tests need, idempotently: git; iproute2 and
# util-linux (ip, nsenter) for the network namespaces of vireo-local's nodes and Pods; the
# standard CNI plugins (bridge, host-local, loopback) for Pod networking; iptables for
# kube-proxy; libvirtd (session mode) and QEMU for the launcher, and a passwd entry for uid
# 107, the launcher's user, without which libvirtd cannot start QEMU ("Failed to find user
# record for uid '107'"). Later features (guest images) add here.
set -euo pipefail
need=()
for pkg in git iproute2 util-linux ca-certificates containernetworking-plugins iptables nftables \
  libvirt-daemon libvirt-daemon-driver-qemu qemu-system-x86; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
if ! getent passwd 107 >/dev/null; then
  echo "creating user qemu (uid 107) for the launcher's libvirtd"
  useradd --system --uid 107 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin qemu
fi
