# The manager image: a static binary on distroless (no shell, no package manager), running as the nonroot user.
# Build: docker build -t <registry>/infrastructure-manager:<version> .
FROM golang:1.26 AS build
WORKDIR /workspace
# Dependencies first, so source changes reuse the module cache layer.
COPY go.mod go.sum ./
RUN go mod download
COPY core/ core/
COPY adapters/ adapters/
COPY operator/ operator/
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/manager ./operator/cmd/manager

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/manager /manager
# 65532 is distroless' nonroot user; the Deployment also sets runAsNonRoot/runAsUser.
USER 65532:65532
ENTRYPOINT ["/manager"]
