#!/usr/bin/env bash
# Installs the system packages Vireo's tests need, idempotently: git; iproute2 and
# util-linux (ip, nsenter) for the network namespaces of vireo-local's nodes and Pods; the
# standard CNI plugins (bridge, host-local, loopback) for Pod networking; iptables for
# kube-proxy; libvirt (libvirtd in session mode, virsh, virt-xml-validate with xmllint), QEMU
# (system emulator, qemu-img, NIC boot ROMs) and genisoimage (cloud-init ISOs, isoinfo) for the
# launcher; dosfstools, mtools and syslinux (BIOS and EFI) for the test guest's boot disk; ovmf
# (EFI firmware) for the domain tests' session libvirtd; libseccomp-dev and
# pkg-config to build runc with seccomp (hack/build-upstream.sh); openssh-client (ssh,
# ssh-keygen) for vireoctl ssh's tests; nodejs and npm to build the web console (make ui) and
# chromium for its browser test (driven by playwright-core, which downloads no browser);
# protobuf-compiler (protoc) and libprotobuf-dev (the descriptor.proto gogo.proto imports) for
# make generate's protobuf step; and a passwd entry
# for uid 107, the launcher's user, without which libvirtd cannot start QEMU ("Failed to find
# user record for uid '107'").
set -euo pipefail
need=()
for pkg in git iproute2 util-linux ca-certificates containernetworking-plugins iptables nftables \
  libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libxml2-utils qemu-system-x86 qemu-utils ipxe-qemu \
  genisoimage dosfstools mtools syslinux syslinux-common syslinux-efi ovmf libseccomp-dev pkg-config openssh-client \
  nodejs chromium protobuf-compiler libprotobuf-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# Debian's nodejs comes without npm; NodeSource's carries its own.
command -v npm >/dev/null 2>&1 || dpkg -s npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
if ! getent passwd 107 >/dev/null; then
  echo "creating user qemu (uid 107) for the launcher's libvirtd"
  useradd --system --uid 107 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin qemu
fi
