#!/usr/bin/env bash
# Installs the system packages Vireo's tests need, idempotently. Today the API server
# tests need nothing beyond Go; later features (libvirt, QEMU, guest images) add here.
set -euo pipefail
need=()
for pkg in git; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
