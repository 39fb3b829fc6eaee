// Package deploy is the production deployment: docker-compose.yml and the
// Dockerfile at the repository root, the Temporal setup scripts in
// deploy/temporal and the image's health probe in deploy/httpcheck.
//
// This package has no code of its own. Its tests keep those files correct
// without a Docker engine: they load the compose file with compose-go and
// check images, ports, health checks, start order and every environment
// variable against what the worker and the starter really read; they parse
// the Dockerfile and run its go build command to check that the binaries
// are static; and they check that the Docker build context keeps every
// file the build needs.
package deploy
