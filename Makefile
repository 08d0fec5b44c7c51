# Vireo's build, test and development entry points. `make help` lists them.
SHELL := /bin/bash
OUT := _output
BIN := $(OUT)/bin
GO ?= go
NODES ?=
HA ?=
BINARIES := $(notdir $(wildcard cmd/*))
# The build's identity (package version), from git when it answers: Go's own VCS stamp is off
# where GOFLAGS has -buildvcs=false.
VERSION_PKG := github.com/vireo-dev/vireo/version
GIT_COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
GIT_TIME := $(shell git log -1 --format=%cI 2>/dev/null)
GIT_TREE := $(if $(GIT_COMMIT),$(if $(shell git status --porcelain --untracked-files=no 2>/dev/null | head -1),dirty,clean))
LDFLAGS := -X $(VERSION_PKG).gitCommit=$(GIT_COMMIT) -X $(VERSION_PKG).gitTime=$(GIT_TIME) -X $(VERSION_PKG).gitTreeState=$(GIT_TREE)

# The web console (web/): npm packages from the lockfile, then esbuild into the directory vireoctl
# embeds. Rebuilt only when its sources or lockfile change (the index is written last).
WEB := web
UI_DIST := internal/webui/assets/dist
UI_SOURCES := $(shell find $(WEB)/src -type f 2>/dev/null) $(WEB)/build.mjs $(WEB)/package.json
NPM ?= npm

.PHONY: help deps build ui upstream images oci upgrade-base push up down test test-unit chaos fuzz generate verify bench scale clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: ui ## Build every binary into _output/bin (vireoctl with the web console of make ui)
	@mkdir -p $(BIN)
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ $(addprefix ./cmd/,$(BINARIES))

ui: $(UI_DIST)/index.html ## Build the web console (web/) into internal/webui/assets/dist, which vireoctl embeds: npm ci from the lockfile, then esbuild (reproducible; cached)

$(WEB)/node_modules/.package-lock.json: $(WEB)/package-lock.json $(WEB)/package.json
	cd $(WEB) && $(NPM) ci --ignore-scripts --no-audit --no-fund --loglevel=error

$(UI_DIST)/index.html: $(WEB)/node_modules/.package-lock.json $(UI_SOURCES)
	cd $(WEB) && node build.mjs

upstream: ## Build etcd, kube-apiserver, kube-controller-manager, kube-proxy, kube-scheduler, kubectl, kubelet, containerd and runc once (cached)
	hack/build-upstream.sh

images: ## Build the test guest (kernel, initramfs, raw and qcow2 disks, containerDisk) from Debian packages into _output/images/tiny (cached)
	$(GO) run ./test/images/build -out $(OUT)/images

oci: ## Build the OCI images of Vireo's components and of what vireo-local and the tests run (pause, agnhost) into _output/oci, without a Docker engine (cached; prints each image's size)
	$(GO) run ./imagebuild/build --out $(OUT)/oci

upgrade-base: ## Build the release e2e's upgrade test starts from (UPGRADE_FROM, default hack/upgrade-from) with git worktree into _output/upgrade (cached)
	hack/upgrade-base.sh

push: ## Build the OCI images and push them to REGISTRY (host[:port]/path; INSECURE=1 for plain HTTP), then write _output/oci/overlay, the kustomize overlay of artifacts/base that uses them
	@if [ -z "$(REGISTRY)" ]; then echo "make push needs REGISTRY, e.g. make push REGISTRY=registry.example.com/vireo" >&2; exit 2; fi
	$(GO) run ./imagebuild/build --out $(OUT)/oci --push $(REGISTRY) $(if $(INSECURE),--insecure)

deps: ## Install the Debian packages that building, running and testing Vireo need (idempotent)
	hack/install-deps.sh

up: deps ## Install what is missing, build, then run Vireo on this machine: Kubernetes with NODES local nodes (default 1, or as many as before), real kubelets with containerd, and Vireo on them from its OCI images; HA=1 runs its control plane highly available (2 vireo-apiservers on a 3-member etcd, 2 vireo-controllers)
	$(MAKE) build upstream images oci
	NODES=$(NODES) HA=$(HA) hack/up.sh

down: ## Stop what `make up` started (data is kept)
	hack/down.sh

test: deps ## Install what the tests need, build (and the release the upgrade test starts from), then run every test (unit, integration, e2e), then each fuzz target for 10 s
	$(MAKE) build upstream images oci upgrade-base
	$(GO) test -count=1 -timeout 55m -parallel 3 ./...
	node --test $(WEB)/test/format.test.mjs $(WEB)/test/stream.test.mjs
	hack/fuzz.sh 10s

test-unit: ## Unit tests only (no servers), the web console's included
	$(GO) test -count=1 -short ./...
	node --test $(WEB)/test/format.test.mjs $(WEB)/test/stream.test.mjs

chaos: deps ## Fault injection on a fresh e2e installation, long: VMs created and deleted while every component on their path is killed at random (SIGKILL) for CHAOS_DURATION (default 10m; CHAOS_SEED=N repeats a run's choices), a node agent away for AGENT_DOWN (default 10m), a node lost; then every invariant checked (make test runs the same briefly)
	$(MAKE) build upstream images oci
	CHAOS_DURATION=$(or $(CHAOS_DURATION),10m) AGENT_DOWN=$(or $(AGENT_DOWN),10m) $(GO) test -count=1 -timeout 90m ./test/e2e -v \
		-run '^(TestChaos|TestNodeAgentDownLeavesGuestsAlone|TestNodeLostRestartsVMElsewhere)$$'

fuzz: ## Run each fuzz target for FUZZTIME (default 2m): decoding, defaulting and validation of every kind, the domain builder, the importer's detection, the guest network layout, the node agent on hostile launcher statuses and VNC servers, the upload server and the node agent's upload relay on hostile requests, the upload client on hostile answers, console sessions on hostile websocket frames, the launcher on hostile Sync requests, and the importer on hostile qemu-img info answers
	hack/fuzz.sh $(or $(FUZZTIME),2m)

generate: deps ## Regenerate clients, deepcopy, defaults, protobuf and OpenAPI
	hack/update-codegen.sh

verify: deps ## Fail if generated code is stale, code is unformatted or go vet complains
	hack/verify-codegen.sh
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

bench: deps build upstream images oci ## API throughput and latency (1, 8, 32 clients): vs. raw etcd, then aggregated API vs. CRD + webhooks; VMI lifecycle (1 and 10 VMIs), VM start/stop (10 VMs) and pause round trips vs. a bare libvirtd; the web console's page load in Chromium vs. the same assets from a plain file server; console/VNC through aggregation vs. straight to the node agent; port-forward vs. a TCP connection straight to the Pod, and the guest agent round trip; live migration (idle and dirtying 256 MiB guest) through Vireo vs. directly between two libvirtds; DataVolume import throughput vs. curl | qemu-img/gzip; density: 100 tiny VMIs created 100 ms apart (as many as the nodes schedule) vs. as many domains on bare libvirtds; writes _output/bench/
	$(GO) run ./test/bench/apibench -out $(OUT)/bench
	$(GO) run ./test/bench/aggbench -out $(OUT)/bench
	$(GO) run ./test/bench/vmibench -out $(OUT)/bench
	$(GO) run ./test/bench/importbench -out $(OUT)/bench

scale: deps build upstream images oci ## Scale by simulation: a real control plane against SCALE_NODES simulated nodes and node agents (default 1000), VMIs created in waves (1,000, 10,000, ...) up to SCALE_VMIS (default 100000), through the whole control path up to SCALE_FULL_PATH VMIs (default 10000; larger waves write their VMIs Running directly, the controller stopped, to measure the API at size), measured against the CRD + webhook baseline; writes _output/bench/scale.txt, scale.json and plots (make test runs 100 VMIs on 10 nodes)
	$(GO) run ./test/scale/scalebench -out $(OUT)/bench -vmis $(or $(SCALE_VMIS),100000) -nodes $(or $(SCALE_NODES),1000) -full-path $(or $(SCALE_FULL_PATH),10000)

clean: ## Remove build outputs (keeps the Go build cache)
	rm -rf $(BIN) $(OUT)/bench
