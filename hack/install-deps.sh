#!/usr/bin/env bash
# Installs the system packages Vireo's tests need, idempotently: git; iproute2 and
# util-linux (ip, nsenter) for the network namespaces of vireo-local's nodes and Pods; the
# standard CNI plugins (bridge, host-local, loopback) for Pod networking; iptables for
# kube-proxy. Later features (libvirt, QEMU, guest images) add here.
set -euo pipefail
need=()
for pkg in git iproute2 util-linux ca-certificates containernetworking-plugins iptables nftables; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
