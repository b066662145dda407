# Kyma Infrastructure Manager. `make help` lists the targets. Target and variable names follow the operator-sdk
# (kubebuilder go/v4) layout, so people who know that layout find what they expect; PROJECT describes it.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN        ?= $(CURDIR)/bin
TOOLS_MOD  := hack/tools/go.mod
GO         ?= go
KUBECTL    ?= kubectl
# docker or podman; the image targets need a running engine.
CONTAINER_TOOL ?= docker

CONTROLLER_GEN := $(BIN)/controller-gen
GOLANGCI_LINT  := $(BIN)/golangci-lint
ACTIONLINT     := $(BIN)/actionlint
GORELEASER     := $(BIN)/goreleaser
CYCLONEDX_GOMOD := $(BIN)/cyclonedx-gomod
KREW_VALIDATE  := $(BIN)/validate-krew-manifest
GOVULNCHECK    := $(BIN)/govulncheck
OPM            := $(BIN)/opm

# The public API is a Go module of its own (operator/api/go.mod); every Go target covers both modules. In the clone,
# go.work makes the root build against ./operator/api; the API module's own commands run outside the workspace
# (API_ENV), as its importers see it: alone, with only its own requirements.
API_MOD_DIR := operator/api
API_MOD := github.com/kyma-project/kim/operator/api
API_ENV := GOWORK=off

# Integration tests need a real kube-apiserver and etcd; hack/envtest.sh builds them once from the Go module proxy
# and caches them outside the clone (~/.cache/kim/envtest) because setup-envtest cannot download here.
ENVTEST_ASSETS = $(shell hack/envtest.sh)

DEMO_ARGS ?=
GOTEST_FLAGS ?=

# Release coordinates.

# VERSION is the semantic version of the manager and the bundle (CSV kim.v$(VERSION)). A release sets it:
# `make docker-build docker-push bundle bundle-build bundle-push catalog-build catalog-push VERSION=0.2.0`.
VERSION ?= 0.1.0
# IMAGE_TAG_BASE is the repository of the manager image; the bundle and catalog images sit next to it.
IMAGE_TAG_BASE ?= ghcr.io/kyma-project/kim
IMG ?= $(IMAGE_TAG_BASE):$(VERSION)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)
# CATALOG_BASE_IMG is the opm image the catalog image is built on, pinned by digest
# (quay.io/operator-framework/opm:<opm version>@sha256:<digest>); catalog-build refuses a tag. The release workflow
# sets it from the repository variable CATALOG_BASE_IMG (docs/release.md).
CATALOG_BASE_IMG ?=
# OLM channels of the bundle (comma-separated) and the package's default channel.
CHANNELS ?= fast
DEFAULT_CHANNEL ?= fast
# Version stamp of the binaries (operator/version): logged at start, exported as kim_build_info, printed by --version.
GIT_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
GIT_BRANCH ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null)
LDFLAGS := -X github.com/kyma-project/kim/operator/version.Version=$(VERSION) \
	-X github.com/kyma-project/kim/operator/version.GitCommit=$(GIT_COMMIT) \
	-X github.com/kyma-project/kim/operator/version.Branch=$(GIT_BRANCH)

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^##@/ {printf "\n%s\n", substr($$0, 5)} /^[a-zA-Z_-]+:.*##/ {printf "  %-22s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Build

.PHONY: build
build: ## Build the manager and the kim CLI into bin/ (version-stamped).
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/manager ./operator/cmd/manager
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/kim ./operator/cmd/kim

.PHONY: kubectl-plugin
kubectl-plugin: ## Build kim as the kubectl plugin bin/kubectl-kim; put it on the PATH (or `make install-kubectl-plugin`).
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/kubectl-kim ./operator/cmd/kim

# Where install-kubectl-plugin copies kubectl-kim; any directory on the PATH works.
PLUGIN_DIR ?= $(shell $(GO) env GOPATH)/bin

.PHONY: install-kubectl-plugin
install-kubectl-plugin: kubectl-plugin ## Install kubectl-kim and its completion link kubectl_complete-kim into PLUGIN_DIR (default $GOPATH/bin): then `kubectl kim restore ...`.
	install -d $(PLUGIN_DIR) && install -m 0755 $(BIN)/kubectl-kim $(PLUGIN_DIR)/kubectl-kim
	ln -sf kubectl-kim $(PLUGIN_DIR)/kubectl_complete-kim
	@echo "installed $(PLUGIN_DIR)/kubectl-kim and kubectl_complete-kim (kubectl's completion of kubectl kim); check with: kubectl plugin list"

.PHONY: run
run: ## Run the manager on this machine against the current kubeconfig's cluster as KCP (needs GARDENER_KUBECONFIG).
	@[ -n "$(GARDENER_KUBECONFIG)" ] || { echo "run: set GARDENER_KUBECONFIG to the kubeconfig of the Gardener project's service account" >&2; exit 2; }
	$(GO) run -ldflags "$(LDFLAGS)" ./operator/cmd/manager --gardener-kubeconfig-path=$(GARDENER_KUBECONFIG) \
		--leader-elect=false --metrics-bind-address=0 --health-probe-bind-address=0 --zap-encoder=console \
		$(if $(RUN_CONFIG),--config=$(RUN_CONFIG),--config-map=kim-manager-config --config-map-namespace=$(RUN_NAMESPACE)) \
		--watch-namespaces=$(RUN_NAMESPACE) $(RUN_ARGS)
# RUN_CONFIG: a configuration file (default: the ConfigMap kim-manager-config in RUN_NAMESPACE); RUN_ARGS: more flags.
RUN_NAMESPACE ?= kcp-system
RUN_CONFIG ?=
RUN_ARGS ?=

.PHONY: demo
demo: ## Run the whole system on the embedded sandbox (garden-in-a-box). Pass flags with DEMO_ARGS.
	@echo "demo: preparing the API server binaries (built once from the Go module proxy, then cached)..."
	@# Built as the tests build (FIPS_BUILD), so after make test (CI) it is a link of packages compiled already, not the
	@# whole dependency tree once more in another configuration; without DWARF, as the image's manager.
	@assets="$$(hack/envtest.sh)" && echo "demo: building the sandbox..." && $(FIPS_BUILD) $(GO) build -ldflags "-w $(LDFLAGS)" -o $(BIN)/sandbox ./test/cmd/sandbox && \
		KUBEBUILDER_ASSETS="$$assets" $(BIN)/sandbox $(DEMO_ARGS)

.PHONY: docker-build
docker-build: ## Build the manager image IMG (version-stamped).
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) --build-arg GIT_COMMIT=$(GIT_COMMIT) --build-arg GIT_BRANCH=$(GIT_BRANCH) -t $(IMG) .

# PLATFORMS of the multi-arch manager image docker-buildx builds and pushes.
PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: docker-buildx
docker-buildx: ## Build and push the manager image IMG for PLATFORMS with an SBOM and a provenance attestation (docker buildx); its digest goes to IMAGE_METADATA.
	mkdir -p $(dir $(IMAGE_METADATA))
	$(CONTAINER_TOOL) buildx build --platform=$(PLATFORMS) --sbom=true --provenance=mode=max --push \
		--build-arg VERSION=$(VERSION) --build-arg GIT_COMMIT=$(GIT_COMMIT) --build-arg GIT_BRANCH=$(GIT_BRANCH) -t $(IMG) \
		--metadata-file $(IMAGE_METADATA) .

# What docker-buildx pushed (buildx's metadata file: "containerimage.digest" is the image index's digest). The
# release generates its bundle with the image by that digest (docs/release.md).
IMAGE_METADATA ?= dist/manager-image.json

.PHONY: docker-push
docker-push: ## Push the manager image IMG.
	$(CONTAINER_TOOL) push $(IMG)

##@ Generated files

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code of the API module.
	cd $(API_MOD_DIR) && $(API_ENV) $(CONTROLLER_GEN) object:headerFile=$(CURDIR)/hack/boilerplate.go.txt paths=./...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC into config/.
	cd $(API_MOD_DIR) && $(API_ENV) $(CONTROLLER_GEN) crd:allowDangerousTypes=true paths=./... output:crd:artifacts:config=$(CURDIR)/config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./operator/controllers/... output:rbac:artifacts:config=config/rbac

.PHONY: bundle
bundle: manifests ## Regenerate and validate the OLM bundle (bundle/, bundle.Dockerfile) for VERSION, IMG, CHANNELS.
	$(FIPS_BUILD) $(GO) run ./operator/cmd/bundlegen -version $(VERSION) -image $(IMG) -channels $(CHANNELS) -default-channel $(DEFAULT_CHANNEL) -validate

.PHONY: verify-generated
verify-generated: $(CONTROLLER_GEN) ## Fail when generated files differ from what the generators produce now.
	BIN=$(BIN) hack/verify-generated.sh

##@ Release

# API_VERSION is the version of the API module a release tags (operator/api/vX.Y.Z) and the root then requires.
API_VERSION ?=

.PHONY: api-version
api-version: ## Make the root require the API module at API_VERSION (go.mod) and the workspace map that version to ./operator/api (go.work).
	@[ -n "$(API_VERSION)" ] || { echo "api-version: set API_VERSION, e.g. make api-version API_VERSION=v0.2.0" >&2; exit 2; }
	old="$$(awk '$$1 == "replace" && $$2 == "$(API_MOD)" {print $$3}' go.work)" && \
		GOWORK=off $(GO) mod edit -require=$(API_MOD)@$(API_VERSION) && \
		$(GO) work edit $${old:+-dropreplace=$(API_MOD)@$$old} -replace=$(API_MOD)@$(API_VERSION)=./$(API_MOD_DIR)
	@echo "api-version: go.mod requires $(API_MOD) $(API_VERSION); go.work maps it to ./$(API_MOD_DIR)"

##@ OLM images

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG from bundle/ (run `make bundle` first).
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image BUNDLE_IMG.
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

.PHONY: sign-olm-images
sign-olm-images: ## Sign the pushed bundle and catalog images by their digests, keyless (cosign; the release workflow's OIDC identity).
	@for img in $(BUNDLE_IMG) $(CATALOG_IMG); do \
		ref="$$($(CONTAINER_TOOL) inspect --format '{{index .RepoDigests 0}}' "$$img")" || exit 1; \
		case "$$ref" in *@sha256:*) ;; *) echo "no pushed digest for $$img: '$$ref' (push it first)" >&2; exit 1 ;; esac; \
		cosign sign --yes "$$ref" || exit 1; \
	done

.PHONY: opm
opm: $(OPM) ## Build opm (operator-registry, the version OLM requires, pinned with checksums in hack/tools/olm/go.mod) into bin/.

.PHONY: catalog-build
catalog-build: opm ## Build the file-based catalog image CATALOG_IMG with the bundle BUNDLE_IMG (pushed first) in CHANNELS, on CATALOG_BASE_IMG.
	OPM=$(OPM) CATALOG_BASE_IMG=$(CATALOG_BASE_IMG) hack/catalog.sh catalog kim $(VERSION) $(BUNDLE_IMG) $(CHANNELS) $(DEFAULT_CHANNEL)
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-push
catalog-push: ## Push the catalog image CATALOG_IMG.
	$(CONTAINER_TOOL) push $(CATALOG_IMG)

##@ Deployment (current kubeconfig context = KCP)

.PHONY: install
install: manifests ## Install the CRDs into the cluster.
	$(KUBECTL) apply --server-side -k config/crd

.PHONY: uninstall
uninstall: ## Remove the CRDs; refuses while Runtimes or GardenerClusters exist (they go with the CRDs) unless FORCE=true.
	hack/deploy.sh uninstall

.PHONY: deploy
deploy: manifests ## Install the operator (config/default: CRDs, RBAC, Deployment, monitoring) with image IMG into kcp-system.
	hack/deploy.sh deploy $(IMG)

.PHONY: undeploy
undeploy: ## Remove what `make deploy` installed except the CRDs, so Runtimes and their clusters stay (`make uninstall` removes the CRDs).
	hack/deploy.sh undeploy

.PHONY: build-installer
build-installer: manifests ## Write dist/install.yaml: everything `make deploy` installs (image IMG), as one file for `kubectl apply --server-side -f`.
	@mkdir -p dist
	hack/deploy.sh render $(IMG) > dist/install.yaml.tmp && mv dist/install.yaml.tmp dist/install.yaml

##@ Test

.PHONY: test
test: link-cache build-ahead lint verify-generated test-alerts test-fips test-all test-beside-mutants ## What CI runs: lint, generated-file check, alert rules, unit tests and docs check in FIPS mode, then only the tests that skipped there (integration tests), every safety mutant still killed (beside them the two-replica chaos test, govulncheck, the install through OLM, go install of the CLI and the demo's smoke test).
	@# The test binaries test-fips kept (about 3 GB) have served test-all and the mutants' judges; the reports stay.
	@rm -rf $(TEST_BIN)
	@echo "links: $$(grep -c '^hit' $(LINK_CACHE_LOG) || true) served from the cache, $$(grep -c '^miss' $(LINK_CACHE_LOG) || true) linked and kept ($(LINK_CACHE_LOG))"

# A fresh machine builds about twenty minutes of tools from source (docs/testing.md). make test starts those its later
# stages need at once, in the background at the lowest CPU priority (hack/ahead.sh), in the order it needs them: they
# compile on the CPU lint, the downloads and the tests leave idle, and each stage that needs one waits for its build
# (a lock) instead of compiling it again. On a warm machine they are cached and this ends in seconds; when make
# fails or is interrupted, the builds stop with it.
AHEAD_LOG = $(BIN)/ahead.log
# A stage that waits for a build ahead raises the builds ahead to normal priority while it waits (hack/ahead.sh
# --boost-while), which finds them through this file.
export AHEAD_PGID = $(abspath $(AHEAD_LOG)).pgid

.PHONY: build-ahead
build-ahead:
	@hack/ahead.sh $$PPID $(AHEAD_LOG) $(MAKE) --no-print-directory BIN=$(BIN) ahead-tools

# What build-ahead builds, in two chains side by side (golangci-lint and actionlint are needed first, and lint builds
# them): the release check's tools, controller-gen, promtool and OLM (test-olm), in the order make test reaches them;
# and govulncheck and its toolchain, then the envtest API servers (test-all). One chain left the cores half idle
# while test-all waited 457 s for the API servers in a cold run of 8ba17cf: much of a build from the module proxy is
# downloads and single-threaded links. The API servers share most of their packages with the repository's own build
# (hack/share-build.sh), so their build comes after compile-deps, which lint runs too (whichever reaches it second
# waits; in cold runs this chain gets there first): each of those packages is compiled once.
.PHONY: ahead-tools
ahead-tools:
	@{ $(MAKE) --no-print-directory $(GORELEASER) $(KREW_VALIDATE) $(CONTROLLER_GEN) && hack/promtool.sh && hack/olm.sh; } & \
		first=$$!; $(MAKE) --no-print-directory $(GOVULNCHECK) && GOTOOLCHAIN=$(VULNCHECK_GOTOOLCHAIN) $(GO) version && \
		$(MAKE) --no-print-directory compile-deps && hack/envtest.sh; second=$$?; \
		wait $$first && exit $$second

# Every package the root module's code and tests import from other modules and the standard library, compiled with
# the tests' settings (FIPS_BUILD) into the Go build cache, under a lock: lint runs it first and build-ahead before
# the envtest API servers, whichever comes second waits for the first, and golangci-lint, the release check,
# the tests and hack/envtest.sh then find those packages compiled. On a warm machine it takes seconds.
.PHONY: compile-deps
compile-deps:
	@mkdir -p $(BIN) && exec 9>$(BIN)/compile-deps.lock && \
		{ flock -n 9 || { echo "waiting for the compile of the dependencies under way ($(AHEAD_LOG))"; hack/ahead.sh --boost-while flock 9; }; } && \
		pkgs="$$($(FIPS_BUILD) $(GO) list -deps -test \
			-f '{{if not .ForTest}}{{if not .Module}}{{.ImportPath}}{{else if not .Module.Main}}{{.ImportPath}}{{end}}{{end}}' ./...)" && \
		$(FIPS_BUILD) $(GO) build $$pkgs

# The go command keeps compiled packages but links every binary again: each test binary of each go test run, each
# safety mutant's judge, each manager a test builds in a child process (about 200 links and 450 to 550 s of CPU in a
# warm make test). Every go command of make test runs its tools through test/cmd/linkcache (-toolexec), which keeps
# what the linker wrote under the go command's own link action ID (~/.cache/kim/links, at most 16 GiB) and copies it
# on the next link of the same inputs (docs/testing.md).
LINK_CACHE_TOOL = $(abspath $(BIN))/linkcache
LINK_CACHE_FLAG ?=
test: LINK_CACHE_FLAG = -toolexec=$(LINK_CACHE_TOOL)
# Each link of the run, served or made (the summary at the end of make test).
LINK_CACHE_LOG = $(BIN)/link-cache.log
test: export LINKCACHE_LOG = $(LINK_CACHE_LOG)

# The compiler, linker and assembler of make test run with this GOGC (test/cmd/linkcache sets it for each tool it
# runs; hack/envtest.sh, hack/olm.sh and hack/promtool.sh for their builds): each runs for seconds and exits, and with
# memory to spare a larger heap between collections costs less CPU. A cold build of client-go and controller-runtime
# took 390-409 s of CPU at 100, 378 s at 200, 361-363 s at 400, 372 s at 800 (docs/testing.md). Only the tools: the
# test binaries and API servers keep their own (a kube-apiserver's heap grows with it, and e2e runs thirty at once).
export TOOLCHAIN_GOGC ?= 400

.PHONY: link-cache
link-cache:
	@rm -f $(LINK_CACHE_LOG)
	@# Built like the tests (FIPS_BUILD without the wrapper itself): a fresh machine compiles its packages once.
	@CGO_ENABLED=0 GOFIPS140=v1.0.0 GOFLAGS="-trimpath -ldflags=-w $(GOFLAGS)" $(GO) build -o $(LINK_CACHE_TOOL) ./test/cmd/linkcache

# Nothing runs twice in `make test`: test-fips keeps its go test -json stream (SHORT_REPORT), test-all runs only the
# tests that skipped there and keeps its own (ALL_REPORT), and verify-mutants takes the baselines of its integration
# judges from that and those of its unit judges (run in test-fips's mode) from SHORT_REPORT (hack/safety-mutants.sh,
# MUTANT_BASELINE_JSON and MUTANT_SHORT_JSON). Run alone, test-all runs every test and verify-mutants every baseline.
test: TEST_ALL_AFTER = $(SHORT_REPORT)
test: MUTANT_BASELINE_JSON = $(ALL_REPORT)
test: MUTANT_SHORT_JSON = $(SHORT_REPORT)
# lint ran go vet's analyzers (golangci-lint's govet, .golangci.yml) on every package, tests included, before the
# tests: go test's own vet pass (a subset) would only repeat it, and on a fresh machine it first runs vet over every
# package the tested one imports, for their facts. Every go test of make test gets it: the go install and OLM tests
# without it spent about 170 s of CPU each vetting some 2,100 packages in a cold run of d7fae62.
test: TEST_VET = -vet=off
# test-all leaves the two-replica chaos test to test-beside-mutants.
test: TEST_ALL_TWO_REPLICAS =
# go test links every test binary again on every run: test-all runs the ones test-fips kept (the same build; GODEBUG,
# the only difference, is read when they start) instead of linking them a second time.
test: TEST_KEEP_BINARIES = $(TEST_BIN)
test: TEST_BINARIES = $(TEST_BIN)
test: MUTANT_TEST_BINARIES = $(TEST_BIN)

# The go test -json streams of test-fips and test-all, written only when every test of the stage passed (a failed
# stage leaves <report>.failed), and the command that runs go test, prints its short report and keeps them.
TEST_REPORTS ?= $(BIN)/test-reports
SHORT_REPORT = $(TEST_REPORTS)/short.json
ALL_REPORT = $(TEST_REPORTS)/all.json
TWO_REPLICAS_REPORT = $(TEST_REPORTS)/two-replicas.json
TEST_BIN = $(BIN)/test-bin
# TEST_KEEP_BINARIES: test-fips keeps each test binary it links there (emptied first); TEST_BINARIES: test-all runs
# the packages whose binary is there from it (through test2json, in the package's directory) instead of linking it.
TEST_KEEP_BINARIES ?=
TEST_BINARIES ?=
TESTREPORT = $(GO) run ./test/cmd/testreport
# TEST_ALL_AFTER: the report of a -short run; test-all then runs, per package, only the top-level tests that skipped
# there (or one of whose subtests did), and fails when the report is missing or records a failure.
TEST_ALL_AFTER ?=
# MUTANT_BASELINE_JSON: reports of a run of this commit without -short (test-all's) whose passed integration tests
# count as the baselines of the mutants they judge; MUTANT_SHORT_JSON: reports of a -short run of this commit in the
# image's FIPS mode (test-fips's) whose passed unit tests do the same for the unit judges, which run in that mode.
MUTANT_BASELINE_JSON ?=
MUTANT_SHORT_JSON ?=
# MUTANT_TEST_BINARIES: test binaries of this commit kept by test-fips; a mutant of a file its test reads at run time
# (no Go source) is judged with its package's kept binary instead of a new link of the same binary.
MUTANT_TEST_BINARIES ?=
TEST_VET ?=
# TEST_DURATIONS: each package's time in the last test-all, kept outside the clone; test-all lists the longest
# packages first (go test starts them in that order), so the end-to-end tests run beside the others, not after them.
TEST_DURATIONS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kim/test-durations.json
# A fresh machine has no such file and ran the end-to-end tests (several minutes) last, beside nothing: the seed holds
# a typical run's times (rounded) for packages the file does not know. Refresh it from TEST_DURATIONS when packages
# come or go or their times change much; a package missing from both comes after those with a time.
TEST_DURATIONS_SEED := hack/test-durations.json

# TEST_ALL_PACKAGES: how many packages test-all runs at a time (go test -p; GOTEST_FLAGS=-p=N overrides it). More
# than the cores: its packages spend much of their time waiting (API servers starting, leases, watches, the simulated
# gardenlet's operations). On this 2-core machine two at a time left the cores 1.64 busy on average and test-all took
# 847 s; three kept them 1.90 busy and it took 725 s (docs/testing.md).
TEST_ALL_PACKAGES ?= 3

# Sequences of the property test per mutant in `make test` (bounded; `make test-safety` runs them at length).
MUTANT_SEQUENCES ?= 20000

.PHONY: verify-mutants
verify-mutants: ## Fail unless every re-introduced defect of hack/safety-mutants/ applies and is found by the test named for it, which passed on the unmutated tree in the same run (in make test, an integration judge's pass in test-all counts).
	hack/safety-mutants.sh --check
	MUTANT_BASELINE_JSON="$(MUTANT_BASELINE_JSON)" MUTANT_SHORT_JSON="$(MUTANT_SHORT_JSON)" MUTANT_TEST_BINARIES="$(MUTANT_TEST_BINARIES)" \
		MUTANT_UNIT_GODEBUG=$(FIPS_GODEBUG) $(FIPS_BUILD) hack/safety-mutants.sh $(MUTANT_SEQUENCES)

# FIPS 140-3 mode of the image (Dockerfile): built against Go's FIPS module, only approved algorithms at run time.
FIPS_GODEBUG = fips140=only,tlsmlkem=0
FIPS_ENV = $(FIPS_BUILD) GODEBUG=$(FIPS_GODEBUG)
# Every test of `make test` is built against the FIPS module, so the safety mutants, test-fips and test-all compile each
# package once between them (the build setting is part of every crypto-dependent package's cache key); lint's
# golangci-lint (which loads the dependencies' export data from the build cache) and the release check use it too,
# so the dependencies they compile first on a cold cache are the tests' as well; so are the envtest API servers'
# (hack/share-build.sh builds them with these settings, TestToolsBuildLikeTheTests). Only test-fips
# also sets fips140=only at run time: that GODEBUG is inherited by the etcd and kube-apiserver processes of the
# integration tests, which do not start in that mode. They are all built with -trimpath as well: a package's cache key
# then leaves out its directory, so the safety mutants' scratch trees, the modules the go install test installs into
# a temporary module cache and the builds in the tests' child processes (which inherit GOFLAGS) share the packages
# compiled once; without it a fresh machine compiled the whole dependency tree once more for the go install test.
# And with -ldflags=-w: the binaries carry no DWARF (the image's manager has none either, Dockerfile), which takes a
# third off every link (the e2e test binary: 22 s of CPU with it, 14.5 s without); go test links every test binary
# again on each run, and a command line's own -ldflags (a version stamp) replaces this one. And with CGO_ENABLED=0, as
# the image and the release build them: a dependency of the in-process gardener-apiserver (VictoriaMetrics' zstd)
# has C code, which made every test binary that links garden-in-a-box link externally (gcc and ld after Go's linker,
# a quarter more CPU per link: the gardenbox test binary 14 s against 10.7 s); without cgo it uses its pure-Go form.
FIPS_BUILD = CGO_ENABLED=0 GOFIPS140=v1.0.0 GOFLAGS="-trimpath -ldflags=-w $(LINK_CACHE_FLAG) $(GOFLAGS)"

.PHONY: test-fips
test-fips: ## Unit tests in the image's FIPS 140-3 mode (GOFIPS140=v1.0.0, GODEBUG=fips140=only): no code path uses a non-approved algorithm. Keeps the go test -json stream in SHORT_REPORT.
	@mkdir -p $(TEST_REPORTS)
	$(FIPS_ENV) $(TESTREPORT) run -o $(SHORT_REPORT) $(if $(TEST_KEEP_BINARIES),-keep-binaries $(TEST_KEEP_BINARIES)) -- \
		$(GO) test -json $(GOTEST_FLAGS) $(TEST_VET) -short ./...

.PHONY: test-unit
test-unit: ## Fast tests only: domain and adapters with fakes, no API servers (-short skips integration tests).
	$(GO) test $(GOTEST_FLAGS) -short ./...
	cd $(API_MOD_DIR) && $(API_ENV) $(GO) test $(GOTEST_FLAGS) -short ./...

.PHONY: test-all
test-all: ## Unit and integration tests (real kube-apiserver/etcd and the real gardener-apiserver), docs check included; in make test only those test-fips skipped. Keeps the go test -json stream in ALL_REPORT.
	@mkdir -p $(TEST_REPORTS)
	@assets="$$(hack/envtest.sh)" && KUBEBUILDER_ASSETS="$$assets" $(FIPS_BUILD) $(TESTREPORT) run -o $(ALL_REPORT) \
		-durations $(TEST_DURATIONS) -durations-seed $(TEST_DURATIONS_SEED) $(if $(TEST_ALL_AFTER),-rerun-skipped $(TEST_ALL_AFTER)) \
		$(if $(TEST_BINARIES),-binaries $(TEST_BINARIES)) -- \
		$(GO) test -json -p $(TEST_ALL_PACKAGES) $(GOTEST_FLAGS) $(TEST_VET) -timeout 40m -skip '^($(GO_INSTALL_TEST)|$(TWO_REPLICAS_TEST)|$(OLM_TEST))$$' $(if $(TEST_ALL_AFTER),,./...)
	$(if $(TEST_ALL_TWO_REPLICAS),$(TWO_REPLICAS_RUN))
	cd $(API_MOD_DIR) && $(API_ENV) $(FIPS_BUILD) $(GO) test $(GOTEST_FLAGS) $(TEST_VET) ./...

TWO_REPLICAS_TEST := TestChaosTwoReplicasShortIntegration
# The two-replica chaos test needs a process of its own (garden-in-a-box starts once per process, and the other chaos
# test starts one), and not beside test-all's packages, whose API servers keep both cores busy: test-all alone runs it
# after them, make test beside the safety mutants (test-beside-mutants). Its stream goes to TWO_REPLICAS_REPORT.
TEST_ALL_TWO_REPLICAS ?= yes
define TWO_REPLICAS_RUN
@assets="$$(hack/envtest.sh)" && KUBEBUILDER_ASSETS="$$assets" $(FIPS_BUILD) $(TESTREPORT) run -o $(TWO_REPLICAS_REPORT) \
	$(if $(TEST_BINARIES),-binaries $(TEST_BINARIES)) -- \
	$(GO) test -json $(GOTEST_FLAGS) -count=1 $(TEST_VET) -timeout 20m -run '^$(TWO_REPLICAS_TEST)$$' ./test/bench/chaos/
endef

# The safety mutants with the two-replica chaos test and vulncheck beside them. The mutants left about 0.4 of the two
# cores idle (their judges are links and short tests, the integration judges one at a time); the two-replica test
# spends its 150 s of faults mostly waiting for leases, partitions and restarts, and its checks hold each write to
# the lease it was sent under, which a loaded machine does not break; vulncheck (a minute and a half of one core
# type-checking the dependency tree) kept the cores only 1.5 busy where it ran before the tests (docs/testing.md).
# The install through OLM and the go install test (about 100 s and 35 s warm, mostly waiting for OLM's operators and
# the module proxy) run there too: with the judges' links served from the cache (LINK_CACHE_FLAG) the mutants leave
# more of the cores idle. The demo's smoke test too: CI ran it after make test, 40 s with the cores mostly idle (the
# sandbox waits for its API servers). Each command's output is printed in one piece when it ends.
.PHONY: test-beside-mutants
test-beside-mutants:
	@$(MAKE) --no-print-directory -j6 --output-sync=line TEST_VET="$(TEST_VET)" TEST_BINARIES="$(TEST_BINARIES)" \
		MUTANT_BASELINE_JSON="$(MUTANT_BASELINE_JSON)" MUTANT_SHORT_JSON="$(MUTANT_SHORT_JSON)" \
		MUTANT_TEST_BINARIES="$(MUTANT_TEST_BINARIES)" LINK_CACHE_FLAG="$(LINK_CACHE_FLAG)" \
		verify-mutants test-two-replicas vulncheck test-olm test-go-install test-demo

.PHONY: test-demo
test-demo: ## Smoke test of the README's first command: make demo until every sample is Ready (exit 0), at most 10 minutes.
	@dir="$$(mktemp -d)" && trap 'rm -rf "$$dir"' EXIT && \
		$(MAKE) --no-print-directory demo DEMO_ARGS="--exit-when-ready --timeout 10m --dir $$dir/sandbox"

# The install through OLM needs OLM's operators and opm besides the API servers: test-olm runs it, test-all skips it.
# hack/olm.sh builds olm, catalog and opm once per OLM version into ~/.cache/kim/olm (docs/testing.md has the cost).
OLM_TEST := TestInstalledByOLMIntegration

.PHONY: test-olm
test-olm: ## Install bundle/ through OLM v0's own operators (built once by hack/olm.sh) into garden-in-a-box: CSV Succeeded, a Runtime Ready, an upgrade, an uninstall (docs/install/olm.md).
	@assets="$$(hack/envtest.sh)" && olm="$$(hack/olm.sh)" && KUBEBUILDER_ASSETS="$$assets" OLM_ASSETS="$$olm" OPM="$$olm/opm" \
		$(FIPS_BUILD) $(GO) test $(GOTEST_FLAGS) -count=1 $(TEST_VET) -timeout 30m -run '^$(OLM_TEST)$$' -v ./test/olm/

# The oldest Kubernetes the bundle claims (the CSV's minKubeVersion, which bundlegen computes from the CRDs' CEL
# functions): its kube-apiserver is built like the envtest binaries (hack/envtest.sh, cached) and judges the CRDs and
# admission policies too. TestOldestKubeVersionIsTheClaimedMinimum keeps the two equal. Not part of make test: the
# build of a second kube-apiserver costs a fresh machine some 30 minutes.
OLDEST_KUBE_VERSION ?= 1.33.13

.PHONY: test-admission-oldest
test-admission-oldest: ## The admission tests (CRD schemas and CEL rules, the admission policies) on the oldest Kubernetes the bundle claims (OLDEST_KUBE_VERSION).
	@assets="$$(KUBE_VERSION=$(OLDEST_KUBE_VERSION) hack/envtest.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) test $(GOTEST_FLAGS) -count=1 ./test/admission/

.PHONY: test-two-replicas
test-two-replicas: ## The two-replica chaos test alone (make test runs it once, beside verify-mutants). Keeps the go test -json stream in TWO_REPLICAS_REPORT.
	@mkdir -p $(TEST_REPORTS)
	$(TWO_REPLICAS_RUN)

# The go install test compiles the CLI once more (minutes): test-go-install runs it on its own, not beside test-all's
# integration tests.
GO_INSTALL_TEST := TestGoInstallFromModuleProxy

.PHONY: test-go-install
test-go-install: ## `go install .../operator/cmd/kim@<version>` from a scratch directory, the modules served from this clone (a local module proxy), then `kim --version`.
	$(FIPS_BUILD) $(GO) test $(GOTEST_FLAGS) -count=1 $(TEST_VET) -timeout 60m -run '^$(GO_INSTALL_TEST)$$' -v ./operator/cmd/kim

.PHONY: docs-check
docs-check: ## Every flag, metric, environment variable and config key named in docs/ exists; every repository link resolves.
	$(GO) test $(GOTEST_FLAGS) -count=1 ./test/docs/

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
	@assets="$$(hack/envtest.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) test $(GOTEST_FLAGS) -timeout 40m -run Integration -skip '^$(OLM_TEST)$$' ./...

.PHONY: bench-runtime
bench-runtime: ## Runtime latency benchmark on garden-in-a-box: shoot Succeeded -> Runtime Ready, Gardener requests per runtime (BENCH_RUNTIMES, BENCH_INTERVAL, BENCH_CREATE).
	@assets="$$(hack/envtest.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) test $(GOTEST_FLAGS) -timeout 30m -run '^$$' \
		-bench BenchmarkRuntimeReadyLatency -benchtime 1x -v ./test/bench/runtime/

.PHONY: envtest
envtest: ## Build (once) and print the directory of the envtest binaries.
	@hack/envtest.sh

.PHONY: lint
lint: tidy-check compile-deps $(GOLANGCI_LINT) $(ACTIONLINT) release-check ## golangci-lint (go vet's analyzers and gosec included, reviewed exclusions in .golangci.yml), in both modules; go.mod files tidy; actionlint on the workflows; the release configuration.
	$(ACTIONLINT) -no-color
	@# No go vet of its own: golangci-lint runs the same analyzers (its govet, .golangci.yml), and each ran twice.
	$(FIPS_BUILD) $(GOLANGCI_LINT) run ./...
	cd $(API_MOD_DIR) && $(API_ENV) $(FIPS_BUILD) $(GOLANGCI_LINT) run ./...

# `make vulncheck`. vuln.go.dev is out of reach, so `vulncheck db` (operator/cmd/vulncheck) builds the database from
# this version of the module golang.org/x/vulndb (from the module proxy; VULNDB_SUM is its go.sum hash) into
# ~/.cache/kim/vulndb/<version> (VULNDB_CACHE overrides), once per version. A newer database: set both, e.g. from
# `go mod download -json golang.org/x/vulndb@master` (fields Version and Sum).
VULNDB_VERSION ?= v0.0.0-20261105234957-e22db6528018
VULNDB_SUM     ?= h1:mfngRv0Yoh0VApsXKEN82CjD99kl7mtparN3bs3JnqI=
# The standard library is checked at the Go release the image is built with (Dockerfile: golang:1.26, the newest
# 1.26 patch), not at the local Go: the go command fetches this toolchain from the module proxy (once). Raise it to
# the newest patch together with VULNDB_VERSION.
VULNCHECK_GOTOOLCHAIN ?= go1.26.11
# Called vulnerabilities no release we can take fixes: scanned module, ID, vulnerable module, reason; reviewed like code.
VULNCHECK_ACCEPTED ?= hack/vulncheck-accepted.txt

# VULNCHECK_LIVE=true (the scheduled workflow, `make vulncheck-live`): govulncheck asks the live database
# (vuln.go.dev) instead of the pinned offline one, so a vulnerability published after VULNDB_VERSION is found within a
# day; the accepted list and the report are the same.
VULNCHECK_LIVE ?=

.PHONY: vulncheck
vulncheck: $(GOVULNCHECK) ## govulncheck (pinned) in both modules against a database built offline from golang.org/x/vulndb; fails on a called vulnerable symbol not in hack/vulncheck-accepted.txt.
	@$(FIPS_BUILD) $(GO) build -o $(BIN)/vulncheck ./operator/cmd/vulncheck
	@out="$$(mktemp -d)" && trap 'rm -rf "$$out"' EXIT && \
		if [ -n "$(VULNCHECK_LIVE)" ]; then dbflag="" && echo "vulncheck: the live database"; else \
		db="$$($(BIN)/vulncheck db -version $(VULNDB_VERSION) -sum $(VULNDB_SUM))" && dbflag="-db file://$$db" && \
		echo "vulncheck: database $$db; canary: a known vulnerable call must be found" && \
		GOVULNCHECK=$(GOVULNCHECK) VULNDB_DIR="$$db" $(FIPS_BUILD) $(GO) test -count=1 $(TEST_VET) -run '^TestKnownVulnerableCallIsFound$$' ./operator/cmd/vulncheck/; fi && \
		scans="" && for d in . $(API_MOD_DIR); do \
			mod="$$(cd $$d && $(GO) mod edit -print | awk '$$1 == "module" {print $$2}')" && n=$$(( $${n:-0} + 1 )) && \
			work=auto && if [ "$$d" = "$(API_MOD_DIR)" ]; then work=off; fi && \
			echo "vulncheck: scanning $$mod (GOWORK=$$work) with the standard library of $(VULNCHECK_GOTOOLCHAIN)" && \
			(cd $$d && GOWORK=$$work GOTOOLCHAIN=$(VULNCHECK_GOTOOLCHAIN) $(GOVULNCHECK) $$dbflag -format json ./...) > "$$out/$$n.json" || \
				{ echo "vulncheck: govulncheck failed in $$d" >&2; exit 1; }; \
			scans="$$scans $$mod=$$out/$$n.json"; \
		done && \
		$(BIN)/vulncheck report -accepted $(VULNCHECK_ACCEPTED) $$scans

.PHONY: vulncheck-live
vulncheck-live: ## vulncheck against the live database (vuln.go.dev), as the scheduled workflow runs it.
	$(MAKE) vulncheck VULNCHECK_LIVE=true

.PHONY: tidy-check
tidy-check: ## go mod tidy -diff is clean in every module (the root, the API module, the pinned tools).
	hack/tidy.sh --check

.PHONY: tidy
tidy: ## go mod tidy in every module; the root as the workspace builds it, with ./operator/api (plain go mod tidy ignores go.work).
	hack/tidy.sh

##@ Release (docs/release.md; a version tag runs .github/workflows/release.yaml)

.PHONY: release-check
release-check: $(GORELEASER) $(KREW_VALIDATE) ## goreleaser check of .goreleaser.yaml, and krew's validation of the plugin manifest goreleaser makes (stub binaries).
	$(GORELEASER) check
	GORELEASER=$(GORELEASER) KREW_VALIDATE=$(KREW_VALIDATE) $(FIPS_BUILD) $(GO) test $(GOTEST_FLAGS) -count=1 $(TEST_VET) ./operator/release/

.PHONY: release-snapshot
release-snapshot: $(GORELEASER) $(CYCLONEDX_GOMOD) $(KREW_VALIDATE) ## What a tag releases, built locally into dist/ without publishing (goreleaser release --snapshot); no container engine needed.
	@# A clone without the remote origin (a local worktree) gets the project's for this run only; without any, goreleaser
	@# drops the git information of a snapshot and stamps the commit "none".
	git remote get-url origin >/dev/null 2>&1 || export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url \
		GIT_CONFIG_VALUE_0=https://github.com/kyma-project/kim.git; \
	PATH="$(BIN):$$PATH" $(GORELEASER) release --snapshot --clean --skip=sign # keyless signing needs the release workflow's OIDC token
	$(KREW_VALIDATE) -skip-install -manifest dist/release/krew/kim.yaml

.PHONY: release
release: $(GORELEASER) $(CYCLONEDX_GOMOD) ## Publish the GitHub release of the checked-out version tag (release workflow; needs GITHUB_TOKEN).
	PATH="$(BIN):$$PATH" $(GORELEASER) release --clean

##@ Benchmarks (not part of `make test`)

BENCH_N ?= 1000
BENCH_ARGS ?=

.PHONY: bench-kubeconfig
bench-kubeconfig: ## Load harness: BENCH_N GardenerClusters converge on garden-in-a-box; prints time, Gardener calls, peak RSS, restart cost.
	@assets="$$(hack/envtest.sh)" && $(GO) build -o $(BIN)/manager ./operator/cmd/manager && \
		KUBEBUILDER_ASSETS="$$assets" $(GO) run ./test/bench/kubeconfig -n $(BENCH_N) -manager-bin $(BIN)/manager $(BENCH_ARGS)

.PHONY: bench-fleet
bench-fleet: ## Fleet load harness: BENCH_RUNTIMES (default 200) Runtimes + as many extra GardenerClusters, all controllers; converge, steady state, restart.
	@assets="$$(hack/envtest.sh)" && $(GO) build -o $(BIN)/manager ./operator/cmd/manager && \
		KUBEBUILDER_ASSETS="$$assets" $(GO) run ./test/bench/fleet -runtimes $(or $(BENCH_RUNTIMES),200) -manager-bin $(BIN)/manager $(BENCH_ARGS)

CHAOS_ARGS ?=

.PHONY: chaos
chaos: ## Chaos harness: 100 Runtimes through 30 min of 30 % Gardener faults and manager SIGKILLs, then the invariants (CHAOS_ARGS: -duration, -kills, -faults, -runtimes, -replicas 2 for two managers with leader election, the leader killed or partitioned, ...).
	@assets="$$(hack/envtest.sh)" && $(GO) build -o $(BIN)/manager ./operator/cmd/manager && \
		KUBEBUILDER_ASSETS="$$assets" $(GO) run ./test/bench/chaos -manager-bin $(BIN)/manager $(CHAOS_ARGS)

##@ Tools (pinned in hack/tools/go.mod)

# Outside the workspace: -modfile is refused in workspace mode, and the tools keep their own dependency versions.
# go-tool MODFILE PACKAGE builds the tool $@ under a lock: make test's builds ahead (build-ahead) may be building it
# when the stage that needs it arrives; that stage then waits and keeps the binary the other build left. Each clone
# builds its tools into its own bin/: once make test has built the link cache's wrapper (link-cache), their links
# come from the cache too (a warm machine then only copies them).
# A third argument adds build flags (one word): ONCE_TOOL_GCFLAGS for the tools below.
TOOL_LINK_CACHE = $(if $(wildcard $(LINK_CACHE_TOOL)),-toolexec=$(LINK_CACHE_TOOL))
go-tool = @mkdir -p $(BIN) && exec 9>$@.lock && { flock -n 9 || { echo "waiting for the build of $(@F) under way ($(AHEAD_LOG))"; hack/ahead.sh --boost-while flock 9; }; } && \
	if [ $@ -nt $(1) ]; then echo "$(@F): built meanwhile"; else \
		echo "GOWORK=off $(GO) build $(TOOL_LINK_CACHE) $(if $(3),'$(3)') -modfile=$(1) -o $@ $(2)" && \
		GOWORK=off $(GO) build $(TOOL_LINK_CACHE) $(if $(3),'$(3)') -modfile=$(1) -o $@ $(2); fi
# Tools a run starts only for a moment (goreleaser's check and stub release, krew's validator, actionlint) are
# compiled without optimisation or inlining: on a fresh machine their builds are minutes of CPU on the critical path,
# and without optimisation the compiler needs about a quarter less (controller-gen: 133 s of CPU, 95 s without;
# docs/testing.md). They do the same, a little slower. Tools that work hard (golangci-lint, govulncheck,
# controller-gen on every package of the API, the API servers) stay optimised. hack/promtool.sh and hack/olm.sh do the same.
ONCE_TOOL_GCFLAGS = -gcflags=all=-N -l
$(CONTROLLER_GEN): $(TOOLS_MOD)
	$(call go-tool,$(TOOLS_MOD),sigs.k8s.io/controller-tools/cmd/controller-gen)
$(ACTIONLINT): hack/tools/actionlint/go.mod
	$(call go-tool,hack/tools/actionlint/go.mod,github.com/rhysd/actionlint/cmd/actionlint,$(ONCE_TOOL_GCFLAGS))
$(GORELEASER): hack/tools/goreleaser/go.mod
	$(call go-tool,hack/tools/goreleaser/go.mod,github.com/goreleaser/goreleaser/v2,$(ONCE_TOOL_GCFLAGS))
$(CYCLONEDX_GOMOD): hack/tools/goreleaser/go.mod
	$(call go-tool,hack/tools/goreleaser/go.mod,github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod)
# opm is built by hack/olm.sh together with OLM's operators (one module graph, hack/tools/olm/go.mod, and one build).
$(OPM): hack/tools/olm/go.mod hack/olm.sh
	@mkdir -p $(BIN)
	cp "$$(hack/olm.sh)/opm" $@
$(KREW_VALIDATE): hack/tools/krew/go.mod
	$(call go-tool,hack/tools/krew/go.mod,sigs.k8s.io/krew/cmd/validate-krew-manifest,$(ONCE_TOOL_GCFLAGS))
$(GOLANGCI_LINT): $(TOOLS_MOD)
	$(call go-tool,$(TOOLS_MOD),github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
$(GOVULNCHECK): $(TOOLS_MOD)
	$(call go-tool,$(TOOLS_MOD),golang.org/x/vuln/cmd/govulncheck)

.PHONY: tools
tools: $(CONTROLLER_GEN) $(GOLANGCI_LINT) $(GOVULNCHECK) ## Build the pinned development tools.
