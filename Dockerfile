# Builds static worker and starter binaries into a minimal non-root image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/worker ./worker && \
    CGO_ENABLED=0 go build -trimpath -o /out/starter ./starter

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/worker /out/starter /usr/local/bin/
COPY examples /examples
USER nonroot
ENTRYPOINT ["/usr/local/bin/worker"]
