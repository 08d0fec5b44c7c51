#!/usr/bin/env bash
# Installs the system packages Vireo's tests need, idempotently: git, and iproute2 for
# the network namespace vireo-local runs vireo-apiserver in. Later features (libvirt,
# QEMU, guest images) add here.
set -euo pipefail
need=()
for pkg in git iproute2 ca-certificates; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
