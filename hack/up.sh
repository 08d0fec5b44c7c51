#!/usr/bin/env bash
# `make up`: start Vireo on this machine and show what to try.
set -euo pipefail
cd "$(dirname "$0")/.."
# HA=1: the control plane as on a cluster (two vireo-apiservers on a three-member etcd, two
# vireo-controllers); HA=0 without; unset: as the installation was made.
ha=()
case "${HA:-}" in
1 | true) ha=(--ha) ;;
0 | false) ha=(--ha=false) ;;
"") ;;
*) echo "HA=${HA}: want 1 or 0" >&2; exit 2 ;;
esac
_output/bin/vireo-local up --nodes "${NODES:-0}" "${ha[@]}" --apply artifacts/examples/vmi-demo.yaml
cat <<MSG

Vireo runs behind a real kube-apiserver (API aggregation). Try:
  export KUBECONFIG=$PWD/_output/local/kubeconfig PATH=$PWD/_output/bin:\$PATH
  kubectl get nodes; kubectl -n vireo-system get pods   # local nodes; Vireo runs on them
  kubectl get vmi -w                    # the demo VMI boots: Scheduling, Scheduled, Running
  kubectl get vmi testvmi -o yaml       # with Vireo's defaults filled in, and its status
  kubectl apply -f artifacts/examples/vmi-tiny.yaml   # a guest with a web server on port 80
  curl http://\$(kubectl get vmi tiny -o jsonpath='{.status.interfaces[0].ipAddress}')/
  kubectl explain vmi.spec.domain.devices
  kubectl apply -f artifacts/examples/vm-demo.yaml   # a VM (runStrategy Always): kubectl get vm shows Running
  _output/bin/vireo-local status        # processes (uptime, restarts), APIServices, Vireo's Pods
  curl http://10.250.0.1:5000/v2/_catalog   # the local OCI registry: 10.250.0.1:5000/vireo/tiny-containerdisk:latest
Stop it with: make down   (data is kept; _output/bin/vireo-local down --purge deletes it)
MSG
