# The handoff image: the worker (the entrypoint), the starter CLI and the
# httpcheck health probe, static binaries on a distroless base that runs as
# a non-root user, with the example specs in /examples. Build with BuildKit
# (the default of Docker 23+): `docker build -t handoff .`
# deploy/dockerfile_test.go parses this file and runs its go build command.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
ENV GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bin/ ./worker ./starter ./deploy/httpcheck
# Deep storage and staging, owned by the runtime user: a named volume
# mounted on /data starts as a copy of this directory.
RUN mkdir -p /out/data/deep /out/data/staging

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bin/ /usr/local/bin/
COPY --from=build --chown=65532:65532 /out/data /data
COPY examples /examples
USER 65532:65532
ENV HANDOFF_DEEP_STORAGE=/data/deep \
    HANDOFF_STAGING_DIR=/data/staging \
    HANDOFF_HTTP_ADDR=:8081
EXPOSE 8081
ENTRYPOINT ["/usr/local/bin/worker"]
