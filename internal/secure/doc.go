// Package secure builds the TLS settings of the worker's and the starter's
// connections from the environment: a client's TLS from certificate and
// key files (tls.go), a server's TLS and mutual TLS (server.go, for the
// REST catalog), and Temporal's TLS, mTLS and API key with the Temporal
// CLI's own variable names (temporal.go). Secrets (key files'
// contents, API keys) never appear in what these types log or print.
package secure
