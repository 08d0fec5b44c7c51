#!/usr/bin/env bash
# `make up`: start Vireo on this machine and show what to try.
set -euo pipefail
cd "$(dirname "$0")/.."
_output/bin/vireo-local up --apply artifacts/examples/vmi-demo.yaml
cat <<MSG

Vireo's API is served by vireo-apiserver on its embedded etcd. Try:
  export KUBECONFIG=$PWD/_output/local/kubeconfig
  kubectl get vmi                       # the demo VirtualMachineInstance
  kubectl get vmi testvmi -o yaml       # with Vireo's defaults filled in
  kubectl apply -f artifacts/examples/  # the other examples
Stop it with: make down
MSG
