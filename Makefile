# Kyma Infrastructure Manager. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN        ?= $(CURDIR)/bin
TOOLS_MOD  := hack/tools/go.mod
GO         ?= go

CONTROLLER_GEN := $(BIN)/controller-gen
MOCKGEN        := $(BIN)/mockgen
GOLANGCI_LINT  := $(BIN)/golangci-lint

# Integration tests need a real kube-apiserver and etcd; hack/envtest.sh builds them once from the Go module proxy
# and caches them outside the clone (~/.cache/kim/envtest) because setup-envtest cannot download here.
ENVTEST_ASSETS = $(shell hack/envtest.sh)

DEMO_ARGS ?=
GOTEST_FLAGS ?=

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ {printf "  %-22s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Build

.PHONY: build
build: ## Build the manager and the kim CLI into bin/.
	$(GO) build -o $(BIN)/manager ./operator/cmd/manager
	@if [ -d operator/cmd/kim ]; then $(GO) build -o $(BIN)/kim ./operator/cmd/kim; fi

.PHONY: demo
demo: ## Run the whole system on the embedded sandbox (garden-in-a-box). Pass flags with DEMO_ARGS.
	@echo "demo: preparing the API server binaries (built once from the Go module proxy, then cached)..."
	@assets="$$(hack/envtest.sh)" && echo "demo: building the kim CLI..." && $(GO) build -o $(BIN)/kim ./operator/cmd/kim && \
		KUBEBUILDER_ASSETS="$$assets" $(BIN)/kim sandbox $(DEMO_ARGS)

##@ Generated files

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./operator/api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC into config/.
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true paths=./operator/api/... output:crd:artifacts:config=config/crd/bases
	@if [ -d operator/controllers ]; then $(CONTROLLER_GEN) rbac:roleName=manager-role paths=./operator/controllers/... output:rbac:artifacts:config=config/rbac; fi

# Bundle version and manager image; empty means the defaults of operator/cmd/bundlegen. A release sets both:
# `make bundle VERSION=0.2.0 IMG=europe-docker.pkg.dev/kyma-project/prod/infrastructure-manager:0.2.0`.
VERSION ?=
IMG ?=

.PHONY: bundle
bundle: manifests ## Regenerate the OLM bundle (bundle/, bundle.Dockerfile) from config/manifests, incl. the generated RBAC.
	$(GO) run ./operator/cmd/bundlegen $(if $(VERSION),-version $(VERSION)) $(if $(IMG),-image $(IMG))

.PHONY: verify-generated
verify-generated: ## Fail when generated files differ from what the generators produce now.
	hack/verify-generated.sh

##@ Test

.PHONY: test
test: lint verify-generated test-alerts test-all ## What CI runs: lint, generated-file check, alert rules, unit and integration tests.

.PHONY: test-unit
test-unit: ## Fast tests only: domain and adapters with fakes, no API servers (-short skips integration tests).
	$(GO) test $(GOTEST_FLAGS) -short ./...

.PHONY: test-all
test-all: ## Unit and integration tests (real kube-apiserver/etcd and the real gardener-apiserver).
	@assets="$$(hack/envtest.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) test $(GOTEST_FLAGS) -timeout 40m ./...

.PHONY: test-alerts
test-alerts: ## Unit-test the Prometheus alert rules with promtool (installs or builds promtool when missing).
	BIN=$(BIN) hack/test-alerts.sh

.PHONY: test-safety
test-safety: ## The safety property test at length (SAFETY_SEQUENCES, default 1,000,000) and the re-introduced defects it must find.
	$(GO) test ./core/usecase -run TestSafetyProperties -count=1 -timeout 6h -v -safety.sequences=$(SAFETY_SEQUENCES)
	hack/safety-mutants.sh

SAFETY_SEQUENCES ?= 1000000

.PHONY: test-integration
test-integration: ## Only the integration tests (test names containing "Integration").
	@assets="$$(hack/envtest.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) test $(GOTEST_FLAGS) -timeout 40m -run Integration ./...

.PHONY: bench-runtime
bench-runtime: ## Runtime latency benchmark on garden-in-a-box: shoot Succeeded -> Runtime Ready, Gardener requests per runtime (BENCH_RUNTIMES, BENCH_INTERVAL, BENCH_CREATE).
	@assets="$$(hack/envtest.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) test $(GOTEST_FLAGS) -timeout 30m -run '^$$' \
		-bench BenchmarkRuntimeReadyLatency -benchtime 1x -v ./operator/e2e/

.PHONY: envtest
envtest: ## Build (once) and print the directory of the envtest binaries.
	@hack/envtest.sh

.PHONY: lint
lint: $(GOLANGCI_LINT) ## go vet and golangci-lint.
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...

##@ Benchmarks (not part of `make test`)

BENCH_N ?= 1000
BENCH_ARGS ?=

.PHONY: bench-kubeconfig
bench-kubeconfig: ## Load harness: BENCH_N GardenerClusters converge on garden-in-a-box; prints time, Gardener calls, peak RSS, restart cost.
	@assets="$$(hack/envtest.sh)" && $(GO) build -o $(BIN)/bench-kubeconfig-manager ./operator/bench/kubeconfig/manager && \
		KUBEBUILDER_ASSETS="$$assets" $(GO) run ./operator/bench/kubeconfig -n $(BENCH_N) -manager-bin $(BIN)/bench-kubeconfig-manager $(BENCH_ARGS)

##@ Tools (pinned in hack/tools/go.mod)

$(CONTROLLER_GEN): $(TOOLS_MOD)
	$(GO) build -modfile=$(TOOLS_MOD) -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen
$(MOCKGEN): $(TOOLS_MOD)
	$(GO) build -modfile=$(TOOLS_MOD) -o $@ go.uber.org/mock/mockgen
$(GOLANGCI_LINT): $(TOOLS_MOD)
	$(GO) build -modfile=$(TOOLS_MOD) -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

.PHONY: tools
tools: $(CONTROLLER_GEN) $(MOCKGEN) $(GOLANGCI_LINT) ## Build the pinned development tools.
