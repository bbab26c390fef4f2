# binding-controller — a Karmada-compatible multi-cluster binding controller.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

BIN          ?= $(CURDIR)/bin
ENVTEST_DIR  ?= $(BIN)/k8s
CONTROLLER_GEN := $(BIN)/controller-gen
GINKGO_FLAGS ?=
GO_TEST_FLAGS ?= -count=1 -timeout 30m

export KUBEBUILDER_ASSETS := $(ENVTEST_DIR)

.PHONY: all
all: build

##@ Development

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

$(CONTROLLER_GEN): hack/tools/controller-gen/go.mod
	go -C hack/tools/controller-gen build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Build the pinned controller-gen into bin/.

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./pkg/apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs (config/crd/bases) and RBAC (config/rbac).
	$(CONTROLLER_GEN) crd:allowDangerousTypes=false paths=./pkg/apis/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=binding-controller-manager paths=./pkg/... output:rbac:artifacts:config=config/rbac

.PHONY: verify-generated
verify-generated: manifests generate ## Fail when generated files differ from what is in git (staged counts).
	@if ! git diff --quiet -- pkg/apis config || [ -n "$$(git ls-files --others --exclude-standard -- pkg/apis config)" ]; then \
	  echo "generated files are stale; run 'make manifests generate' and commit:"; \
	  git --no-pager diff --stat -- pkg/apis config; git ls-files --others --exclude-standard -- pkg/apis config; exit 1; fi

.PHONY: fmt
fmt: ## go fmt (the bench module too).
	go fmt ./...
	go -C bench fmt ./...

.PHONY: vet
vet: ## go vet (the bench module too).
	go vet ./...
	go -C bench vet ./...

.PHONY: envtest
envtest: ## Build the real kube-apiserver, etcd and kubectl into bin/k8s (no-op when current).
	ENVTEST_DIR=$(ENVTEST_DIR) hack/envtest.sh

##@ Build and run

.PHONY: build
build: ## Build bin/binding-controller-manager.
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/binding-controller-manager ./cmd/binding-controller-manager

##@ Try it

RUN_ARGS ?=
RUN_LOCAL_ARGS ?=

# run, demo and demo-rollout exec the built program: make forwards SIGTERM to its child, and a `go run`
# in between would die and leave the program (and the control plane) running.
.PHONY: run
run: envtest build ## Run the controller against a local control plane (bin/local/kubeconfig) until Ctrl-C; manager flags: RUN_ARGS='...'; plane flags: RUN_LOCAL_ARGS='--karmada-webhook'.
	go build -o $(BIN)/run-local ./hack/run-local
	exec $(BIN)/run-local --manager $(BIN)/binding-controller-manager --kubeconfig $(BIN)/local/kubeconfig $(RUN_LOCAL_ARGS) -- $(RUN_ARGS)

.PHONY: demo
demo: envtest build ## Play the case it exists for (member1 disconnected), narrated, against a local control plane.
	go build -o $(BIN)/demo ./hack/demo
	exec $(BIN)/demo --manager $(BIN)/binding-controller-manager

.PHONY: demo-rollout
demo-rollout: envtest build ## Play a staged rollout (a good image stage by stage, a bad one halted at the canary and rolled back), narrated, against a local control plane.
	go build -o $(BIN)/demo ./hack/demo
	exec $(BIN)/demo --story rollout --manager $(BIN)/binding-controller-manager

##@ Benchmarks and soak (not part of make test)

# The benchmark is a module of its own (bench/go.mod); its results stay in bench/results.
BENCH_ARGS ?=
SOAK_DURATION ?= 10m

.PHONY: bench
bench: envtest ## This controller over 1000 bindings × 10 clusters: throughput against a plain client creating the same Works, requests per Work, no-op resync, restart, memory; fan-out, larger manifests, behind the Work webhook (bench/results/propagation.json).
	go -C bench run . propagation $(BENCH_ARGS)

.PHONY: bench-recovery
bench-recovery: envtest ## Recovery of a cluster blocked 2 s, 10 s and 30 s, with the Work watch and backoff-only side by side (bench/results/recovery.json).
	go -C bench run . propagation --scenarios restart,recovery --versus backoff=--watch-works=false --recovery-blocks 2s,10s,30s \
	  --recovery-samples 3 --bindings 10 --json bench/results/recovery.json $(BENCH_ARGS)

.PHONY: bench-rollout
bench-rollout: envtest ## A staged rollout of 1,000 bindings over 10 clusters against the same change under no policy: controller CPU per sync, time per stage less the soak (bench/results/rollout.json).
	go -C bench run . rollout $(BENCH_ARGS)

.PHONY: soak
soak: envtest ## Random bindings, cluster blocks and controller restarts for SOAK_DURATION; fails on a leak or a binding that never converges.
	go run ./hack/soak --duration $(SOAK_DURATION)

##@ Against Karmada (not part of make test; CI never needs Karmada)

KARMADA ?=
DIFF_ARGS ?=

.PHONY: diff-karmada
diff-karmada: envtest build ## Differential fuzzer: Karmada's binding controller (built from KARMADA=<checkout>) and this one over the same generated inputs; report in bench/results/diff-karmada (DIFF_ARGS='--seed 1 --bindings 2000').
	@test -n "$(KARMADA)" || { echo "diff-karmada: KARMADA=<a Karmada checkout or fetched git directory> is required"; exit 2; }
	go run ./hack/diffkarmada --karmada $(KARMADA) $(DIFF_ARGS)

.PHONY: bench-vs-karmada
bench-vs-karmada: envtest ## Karmada's binding controller (built from KARMADA=<checkout>, cached in bin/karmada) and this one over the same fleet: throughput, CPU, RSS, restart, recovery, fresh changes during a restart, as ratios (bench/results/vs-karmada.json; BENCH_ARGS='--bindings 10000' for 100,000 Works). Without KARMADA, this one alone.
	go -C bench run . vs-karmada $(if $(KARMADA),--karmada $(abspath $(KARMADA))) $(BENCH_ARGS)

##@ Test

.PHONY: test
test: envtest build ## Run every unit, integration and e2e test (real kube-apiserver + etcd), the bench module's unit tests, then fuzz the Lua sandbox for FUZZ_TIME (an execution count, or a duration).
	go test $(GO_TEST_FLAGS) ./... $(GINKGO_FLAGS)
	$(MAKE) test-bench
	$(MAKE) fuzz

.PHONY: test-unit
test-unit: ## Unit tests only: no control plane, no binary (under 2 minutes); the bench module's too.
	go test $(GO_TEST_FLAGS) $$(go list ./... | grep -v -e /test/integration/ -e /test/e2e -e /test/faults -e /test/demo)
	$(MAKE) test-bench

.PHONY: test-bench
test-bench: ## The bench module's unit tests (no control plane): it builds, and its parsing and arithmetic hold.
	go -C bench test $(GO_TEST_FLAGS) ./...

.PHONY: test-integration
test-integration: envtest ## Integration tests: the controller in-process against a real kube-apiserver + etcd.
	go test $(GO_TEST_FLAGS) ./test/integration/... $(GINKGO_FLAGS)

.PHONY: test-e2e
test-e2e: envtest build ## End-to-end tests: the built binary as its own process, fault injection, the soak (SOAK_DURATION) and the demo.
	go test $(GO_TEST_FLAGS) ./test/e2e/... ./test/faults/... ./test/demo/... $(GINKGO_FLAGS)

GOLANGCI_LINT := $(BIN)/golangci-lint

$(GOLANGCI_LINT): hack/tools/golangci-lint/go.mod
	go -C hack/tools/golangci-lint build -o $(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint, pinned in hack/tools/golangci-lint, with .golangci.yml; the bench module too.
	$(GOLANGCI_LINT) run ./...
	cd bench && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...

# An execution count, not a duration: Go 1.26's fuzz coordinator can fail a run with a
# bare "context deadline exceeded" when a duration ends mid-execution on a busy machine
# (go.dev/issue/75804, fixed in Go 1.27). About 30 s of fuzzing on an idle 2-core machine.
FUZZ_TIME ?= 20000x

.PHONY: fuzz
fuzz: ## Fuzz the Lua sandbox's library for FUZZ_TIME executions or duration (no call past 1.5 s or 512 MiB, no panic); new finds go to Go's fuzz cache, failures to pkg/interpreter/luavm/testdata/fuzz.
	go test ./pkg/interpreter/luavm -run '^$$' -fuzz '^FuzzLibraryCalls$$' -fuzztime $(FUZZ_TIME)
