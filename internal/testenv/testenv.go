// Package testenv gives tests real services, started lazily once per test
// binary and shared by its tests: a PostgreSQL cluster (a fresh database
// per caller) and a Temporal dev server. A package that uses it stops them
// through its TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// Main runs the tests, stops the services they started and exits with the
// tests' status.
func Main(m *testing.M) {
	code := m.Run()
	if code != 0 && tmp.server != nil {
		fmt.Fprintf(os.Stderr, "testenv: temporal dev server output (last %d bytes):\n%s\n", temporalLog.Size, &temporalLog)
	}
	for _, err := range []error{stopTemporal(), stopPostgres()} {
		if err != nil {
			fmt.Fprintln(os.Stderr, "testenv: stop:", err)
		}
	}
	os.Exit(code)
}
