# syntax=docker/dockerfile:1
#
# binding-controller-manager image: a static binary on distroless, running as non-root.
#
#   docker build -t binding-controller-manager:latest .
#   docker buildx build --platform linux/amd64,linux/arm64 -t <registry>/binding-controller-manager:<tag> --push .
#
# Needs BuildKit (default since Docker 23) for the cache mounts. Go modules come from
# $GOPROXY (build arg; empty means Go's default, proxy.golang.org).

# The builder runs on the build host's platform and cross-compiles for the target one.
FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
# Set by BuildKit from --platform; empty means linux and the build host's architecture.
ARG TARGETOS
ARG TARGETARCH
ARG GOPROXY
ENV GOPROXY=${GOPROXY}
WORKDIR /workspace

# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

COPY cmd/ cmd/
COPY pkg/ pkg/
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w" -o /out/binding-controller-manager ./cmd/binding-controller-manager

# static: no libc needed (CGO_ENABLED=0); nonroot: uid/gid 65532, no shell.
FROM gcr.io/distroless/static:nonroot
COPY --from=builder /out/binding-controller-manager /binding-controller-manager
USER 65532:65532
ENTRYPOINT ["/binding-controller-manager"]
