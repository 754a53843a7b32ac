# evictkit: GNU make targets. Run `make help` for the list.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

GO       ?= go
PKG      := ./pkg/kubelet/eviction
FUZZTIME ?= 10m

# K8S_VERSION picks the upstream base (scripts/lib/versions.sh lists them;
# the first is the default). On another base, go commands in evictkit's
# module use bases/<version>/go.mod and the Go that file asks for.
export K8S_VERSION
BASE_GOENV := $(shell K8S_VERSION='$(K8S_VERSION)' bash -c 'source scripts/lib/versions.sh && base_go_env "$$PWD"')
ifneq ($(.SHELLSTATUS),0)
$(error K8S_VERSION=$(K8S_VERSION) cannot be used, see the error above)
endif
ifneq ($(filter GOFLAGS=%,$(BASE_GOENV)),)
export GOFLAGS := $(patsubst GOFLAGS=%,%,$(filter GOFLAGS=%,$(BASE_GOENV)))
endif
ifneq ($(filter GOTOOLCHAIN=%,$(BASE_GOENV)),)
export GOTOOLCHAIN := $(patsubst GOTOOLCHAIN=%,%,$(filter GOTOOLCHAIN=%,$(BASE_GOENV)))
endif

# Modules that stand in for ones the Go module proxy refuses (bases/standins).
STANDINS = $(wildcard bases/standins/*)

# Go files checked by gofmt (everything but build output and git internals).
GOFILES = find . -type f -name '*.go' -not -path './_output/*' -not -path './.git/*'

.PHONY: help vm-node vm-node-down test vet fmt-check unit test-cgroupv2 bench fuzz mutation api-diff patches verify-patches rebase stage-tests upstream-tree kubelet upstream-e2e check-kubelet \
	host-deps components engine-up engine-down node-image cluster cluster-down cluster-logs cluster-smoke test-node test-node-controls test-e2e e2e bench-e2e soak \
	test-upstream-node test-upstream-node-down upstream-smoke upstream-smoke-control parity test-other-bases base-gate

help: ## List the targets
	@echo "Usage: make <target> [VAR=value]"
	@echo
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-15s %s\n", $$1, $$2}'
	@echo
	@echo "Variables: FUZZTIME=$(FUZZTIME) (per Fuzz target, for make fuzz), GO=$(GO), K8S_VERSION (the upstream base: $$(bash -c 'source scripts/lib/versions.sh && echo "$${K8S_BASES[*]}"'))"

test: ## The gate: vet, gofmt, unit tests (+ fuzz seeds, -race), the same on cgroup v2 in a VM, api-diff, verify-patches (each commit: build, tests, short parity), the package's tests at each stage of the series, kubelet build + in-tree tests, cluster smoke (+ Smoke node e2e), one upstream eviction spec unmodified on our kubelet; then the fast gate on the other supported bases
	@start=$$(date +%s); \
	for step in $(TEST_STEPS); do \
		echo "==> make test: $$step (at +$$(( $$(date +%s) - start )) s)"; \
		case "$$step" in \
		stage-tests) PARITY=0 $(MAKE) "$$step" ;; \
		*) $(MAKE) "$$step" ;; \
		esac || { echo "==> make test: $$step FAILED (at +$$(( $$(date +%s) - start )) s)"; exit 1; }; \
	done; \
	echo "==> make test: all steps passed in $$(( $$(date +%s) - start )) s"

# make test's steps in order; each line of its log says when a step began,
# so a CI log's tail shows where a run spent its time.
TEST_STEPS = vet fmt-check unit test-cgroupv2 api-diff verify-patches stage-tests kubelet check-kubelet cluster-smoke upstream-smoke test-other-bases

OTHER_BASES = $$(bash -c 'source scripts/lib/versions.sh && echo "$${K8S_BASES[@]:1}"')

test-other-bases: ## The fast gate on each supported base but the default: vet, unit, api-diff, verify-patches, kubelet build + check-kubelet (where the proxy serves all the kubelet needs)
	@for v in $(OTHER_BASES); do \
		echo "==> fast gate on K8S_VERSION=$$v"; \
		$(MAKE) K8S_VERSION=$$v base-gate || exit 1; \
	done

base-gate:
	@$(MAKE) vet
	@$(MAKE) unit
	@$(MAKE) api-diff
	@$(MAKE) verify-patches
	@rc=0; bash scripts/pipeline.sh kubelet || rc=$$?; \
	if [[ $$rc == 3 ]]; then \
		echo "==> NOT RUN on $(K8S_VERSION): the kubelet build and check-kubelet (the error above says why)"; \
	elif [[ $$rc != 0 ]]; then \
		exit $$rc; \
	else \
		$(MAKE) check-kubelet; \
	fi

vet: ## go vet ./... (and in each stand-in module under bases/standins)
	@echo "==> go vet ./..."
	@$(GO) vet ./...
	@for m in $(STANDINS); do echo "==> go vet ./... in $$m (a stand-in module)"; (cd "$$m" && GOFLAGS= $(GO) vet ./...); done

fmt-check: ## Fail listing any Go file that gofmt would change
	@echo "==> gofmt -l"
	@unformatted="$$($(GOFILES) -print0 | xargs -0 -r gofmt -l)"; \
	if [[ -n "$$unformatted" ]]; then \
		echo "These files are not gofmt-formatted (run gofmt -w on them):"; \
		echo "$$unformatted" | sed 's/^/  /'; \
		exit 1; \
	fi

# The e2e suites need a cluster: make test-node and make test-e2e run them.
# The eviction package runs apart, with -race.
UNIT_PKGS = $$($(GO) list ./... | grep -v -x -e '$(MODULE)/test/node' -e '$(MODULE)/test/e2e' -e '$(MODULE)/pkg/kubelet/eviction')
MODULE   := github.com/evictkit/evictkit

unit: ## go test -count=1 of every package but the e2e suites, the eviction package with -race; lists every skipped test (EVICTION_TEST_REAL_CGROUPS=v1|v2: a real-kernel test that cannot run fails)
	@echo "==> go test -count=1 (all packages but test/node, test/e2e; $(PKG) with -race)"
	@{ $(GO) test -count=1 -json $(UNIT_PKGS); \
	   for m in $(STANDINS); do (cd "$$m" && GOFLAGS= $(GO) test -count=1 -json ./...); done; \
	   $(GO) test -count=1 -race -json $(PKG); } | $(GO) run ./scripts/testreport -lane "host, cgroup $${EVICTION_TEST_REAL_CGROUPS:-v1 or v2 (not required)}"

test-cgroupv2: ## The eviction package's tests on a real cgroup v2 kernel, in a QEMU VM (RUN=<regexp>)
	@bash scripts/test-cgroupv2.sh

api-diff: ## Compare our exported API with upstream's pkg/kubelet/eviction (GOOS=linux)
	@echo "==> api-diff: $(PKG) vs k8s.io/kubernetes/pkg/kubelet/eviction"
	@$(GO) run -buildvcs=false ./scripts/apidiff

bench: ## Side-by-side synchronize benchmark against upstream (scripts/bench.sh)
	@if [[ -f scripts/bench.sh ]]; then \
		echo "==> scripts/bench.sh"; \
		bash scripts/bench.sh; \
	else \
		echo "make bench: not yet implemented (scripts/bench.sh does not exist yet)" >&2; \
		exit 1; \
	fi

fuzz: ## Run every Fuzz* target in pkg/kubelet/eviction for FUZZTIME each, one after another
	@list="$$($(GO) test -list '^Fuzz' $(PKG))"; \
	targets="$$(grep -E '^Fuzz' <<<"$$list" || true)"; \
	if [[ -z "$$targets" ]]; then \
		echo "make fuzz: no Fuzz* targets found in $(PKG)" >&2; \
		exit 1; \
	fi; \
	for t in $$targets; do \
		echo "==> fuzz $$t for $(FUZZTIME)"; \
		$(GO) test $(PKG) -run '^$$' -fuzz "^$$t\$$" -fuzztime '$(FUZZTIME)' -timeout 0; \
	done; \
	echo "==> make fuzz: all targets ran $(FUZZTIME) without a failure"

parity: ## Upstream's eviction manager vs ours on generated scenarios, through the exported API (N=5000, SEED=1, BOUND=500); last line is the verdict
	@echo "==> parity: $(or $(N),5000) scenarios from seed $(or $(SEED),1) (upstream $$(bash -c 'source scripts/lib/versions.sh && echo "$${K8S_VERSION}"') from the module cache)"
	@$(GO) run ./cmd/evictkit-parity -n $(or $(N),5000) -seed $(or $(SEED),1) -bound $(or $(BOUND),500)

mutation: ## Mutation score of the decision core (gremlins; WORKERS, FILES=<regexp>, MIN_SCORE=90); report in _output/reports/mutation.md
	@bash scripts/mutation.sh

upstream-tree: ## Materialize pristine upstream Kubernetes as a git repo in _output/upstream
	@bash scripts/upstream-tree.sh

patches: ## Regenerate the patch series in patches/ from the code
	@bash scripts/patches.sh generate

verify-patches: ## Fail unless patches/ is what make patches generates and applies with git am
	@bash scripts/patches.sh verify

rebase: ## What carrying the series to upstream release TO takes: upstream's changes to the files it touches, git am -3 onto TO, per patch; report in _output/reports/ (changes nothing)
	@bash scripts/rebase.sh "$(TO)"

stage-tests: ## The eviction package's tests at every stage of the patch series, cut as the generator cuts it (RUN=<regexp>)
	@bash scripts/stage-tests.sh

# The build pipeline's steps: scripts/pipeline.sh runs each after what it
# needs (kubelet, host-deps -> components -> engine -> node-image -> cluster).
kubelet: ## Build _output/bin/{kubelet,kubeadm,kubectl} (patched) and kubelet-upstream
	@bash scripts/pipeline.sh kubelet

upstream-e2e: ## Build upstream's e2e_node.test and ginkgo from the pristine tree, after checking test/ is byte-identical to upstream's
	@bash scripts/build-upstream-e2e.sh

check-kubelet: ## Prove the built kubelet runs our package; upstream's tests pass in the patched tree
	@bash scripts/check-kubelet.sh

host-deps: ## Install the Debian packages the cluster build needs (only what is missing)
	@bash scripts/pipeline.sh host-deps

components: ## Build containerd, runc, dockerd, crictl, CNI, etcd, coredns, control plane, kind into _output/bin
	@bash scripts/pipeline.sh components

engine-up: ## Start the project's own Docker engine (if not running)
	@bash scripts/pipeline.sh engine

engine-down: ## Stop the project's Docker engine if the project started it
	@bash scripts/engine.sh down

node-image: ## Build the kind node image (skipped when its inputs did not change)
	@bash scripts/pipeline.sh node-image

cluster: ## Bring up kind-config.yaml's cluster (KUBECONFIG=_output/kubeconfig); idempotent
	@bash scripts/pipeline.sh cluster

cluster-down: ## Delete the cluster, its dedicated filesystems, and stop the engine; idempotent
	@bash scripts/cluster.sh down

vm-node: ## A cgroup v2 node (QEMU VM, kubelet + containerd) joined to a running cluster (CLUSTER, VM_NAME, KUBELET, VM_MEMORY); idempotent
	@bash scripts/vm-node.sh up

vm-node-down: ## Remove the cgroup v2 VM node: its Node object, the VM, its tap device and disk
	@bash scripts/vm-node.sh down

cluster-logs: ## Export the cluster's logs to _output/logs
	@bash scripts/cluster.sh logs

test-node: node-image ## Node e2e eviction suites on a node of the cluster (KUBELET=evictkit|upstream, NODE, LABELS=<ginkgo label filter>, REPEAT)
	@bash scripts/test-node.sh

test-upstream-node: kubelet upstream-e2e node-image ## Upstream's own node e2e specs, unmodified, on a node container of their own (KUBELET=evictkit|upstream, FOCUS, SKIP, REPEAT, NODES, KEEP_NODE=1); table in _output/reports/upstream-node-e2e.md
	@rc=0; bash scripts/test-upstream-node.sh || rc=$$?; \
	go run ./cmd/evictkit-report -upstream-node _output/reports/upstream-node-e2e -out _output/reports/upstream-node-e2e.md || rc=1; \
	exit $$rc

test-upstream-node-down: ## Remove the node container of make test-upstream-node (KEEP_NODE=1) and its filesystem
	@bash scripts/test-upstream-node.sh down

test-node-controls: node-image ## Negative controls: every Alpha spec without its feature gate on kubelet-upstream must fail as it says (KUBELET, LABELS); table in _output/reports/
	@KUBELET=$${KUBELET:-upstream} CONTROL=1 bash scripts/test-node.sh

e2e: ## Main job: build everything, bring up the cluster, run test/node and test/e2e, print a summary, remove the cluster (KEEP_CLUSTER=1, KUBELET, LABELS)
	@bash scripts/e2e.sh

soak: node-image ## Random pressure on one worker, the history held to invariants, on each kubelet from one seed (DURATION=60m split between them, or all on KUBELET; SEED); reports in _output/reports/soak-*.md
	@bash scripts/soak.sh

bench-e2e: node-image ## Side-by-side eviction benchmark, ours (alpha gates on) vs kubelet-upstream on one node (RUNS, SCENARIOS, NODE, V2=1: the cgroup v2 VM node, REPORT=1)
	@bash scripts/bench-e2e.sh

test-e2e: ## Cluster e2e suites on the two workers of the running cluster (KUBELET=evictkit|upstream, LABELS, REPEAT)
	@bash scripts/test-e2e.sh

upstream-smoke: kubelet components ## CI gate: upstream's LocalStorageCapacityIsolationEviction spec, unmodified, on our kubelet (make test-upstream-node with that focus)
	@bash scripts/upstream-smoke.sh

upstream-smoke-control: kubelet components ## Negative control of upstream-smoke: the same spec must fail on a kubelet that enforces no local storage limit
	@bash scripts/upstream-smoke.sh control

cluster-smoke: kubelet components ## CI gate: a one-node cluster from the node image reaches Ready, passes the network check and the Smoke node e2e specs, then is removed
	@bash scripts/cluster-smoke.sh
