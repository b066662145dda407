# The manager image (and the end-to-end probe's): static binaries on distroless (no shell, no package manager), running as the nonroot user.
# Build: make docker-build IMG=<registry>/infrastructure-manager:<version> (passes VERSION and GIT_COMMIT).
# Base images are pinned by digest (the tag names the line Dependabot follows; it updates the digest). The digests
# were read from public repositories pinning the same tags (no registry is reachable where this was written).
# The build stage runs on the builder's own platform and cross-compiles for the target (Go needs no emulation: a
# multi-arch build with buildx is two native compiles, not one under QEMU); the module and build caches are BuildKit
# cache mounts, kept between builds on the same builder and never part of a layer.
FROM --platform=$BUILDPLATFORM golang:1.26@sha256:b54cbf583d390341599d7bcbc062425c081105cc5ef6d170ced98ef9d047c716 AS build
WORKDIR /workspace
# Dependencies first, so source changes reuse the module cache layer. The API is a module of its own; go.work (the
# repository's workspace) builds the root against ./operator/api, so both go.mod files and go.work must be there
# before the download (go.work.sum is not committed: the download verifies what it adds).
COPY go.mod go.sum go.work ./
COPY operator/api/go.mod operator/api/go.sum operator/api/
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY core/ core/
COPY adapters/ adapters/
COPY internal/ internal/
COPY operator/ operator/
# Set by BuildKit to the platform being built (docker build: the daemon's; buildx --platform: each one in turn).
ARG TARGETOS
ARG TARGETARCH
# The version stamp (operator/version): logged at start, exported as kim_build_info, printed by --version.
ARG VERSION=dev
ARG GIT_COMMIT=unknown
ARG GIT_BRANCH=
# Go's native FIPS 140-3 module (the frozen v1.0.0 snapshot): every cryptographic call goes to the validated module.
ARG GOFIPS140=v1.0.0
ENV GOFIPS140=${GOFIPS140}
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false \
    -ldflags="-s -w -X github.com/kyma-project/kim/operator/version.Version=${VERSION} -X github.com/kyma-project/kim/operator/version.GitCommit=${GIT_COMMIT} -X github.com/kyma-project/kim/operator/version.Branch=${GIT_BRANCH}" \
    -o /out/manager ./operator/cmd/manager && \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags="-s -w" \
    -o /out/probe ./operator/cmd/probe

FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/manager /manager
# The end-to-end probe of config/probe runs the same image with command /probe.
COPY --from=build /out/probe /probe
# Only FIPS-approved algorithms at run time (anything else fails instead of running); ML-KEM key exchange is not
# approved in the v1.0.0 module, so TLS does not offer it. make test-fips runs the tests in this mode.
ENV GODEBUG=fips140=only,tlsmlkem=0
# 65532 is distroless' nonroot user; the Deployment also sets runAsNonRoot/runAsUser.
USER 65532:65532
ENTRYPOINT ["/manager"]
