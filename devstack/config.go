package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Fixed ports, chosen to be the usual ones (so the docs' URLs work) except
// Postgres, which avoids a system server on 5432.
const (
	pgPort          = 54329
	temporalPort    = 7233
	temporalUIPort  = 8233
	kafkaPort       = 9092
	workerHTTPPort  = 8081
	catalogPort     = 8181
	databaseName    = "handoff"
	temporalNS      = "default"
	defaultSpecPath = "examples/wiki.json"
)

// temporalUIURL is where the dev server's Web UI is: the stack starts it
// there (--ui-port), so it knows, and says so to the starter it runs.
var temporalUIURL = "http://localhost:" + strconv.Itoa(temporalUIPort)

// config is the command line.
type config struct {
	// rate is the generator's events per second. Default 200.
	rate float64
	// spec is the supervisor spec to start. Default examples/wiki.json.
	spec string
	// noGenerator leaves the topic empty for the user to fill. Default false.
	noGenerator bool
	// partitions of the spec's topic. Default 4.
	partitions int
	// pgBinDir holds initdb and postgres. Default: pgcluster's choice.
	pgBinDir string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("devstack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: devstack [flags]  (run from the repository root; `make dev` builds and runs it)\n\n")
		fs.PrintDefaults()
	}
	fs.Float64Var(&c.rate, "events-per-second", 200, "generator rate (0: as fast as possible)")
	fs.StringVar(&c.spec, "spec", defaultSpecPath, "supervisor spec to start")
	fs.BoolVar(&c.noGenerator, "no-generator", false, "do not produce sample events")
	fs.IntVar(&c.partitions, "partitions", 4, "partitions of the spec's topic")
	fs.StringVar(&c.pgBinDir, "pg-bin-dir", "", "directory of initdb and postgres (default: newest /usr/lib/postgresql/*/bin)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	switch {
	case fs.NArg() > 0:
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.rate < 0:
		return config{}, fmt.Errorf("--events-per-second %v: want 0 or more", c.rate)
	case c.partitions < 1:
		return config{}, fmt.Errorf("--partitions %d: want 1 or more", c.partitions)
	}
	return c, nil
}

// layout is where everything lives, as absolute paths so children started
// elsewhere (postgres runs in its own dir) agree.
type layout struct{ root string }

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.root}, elem...)...)
}

func (l layout) dev(elem ...string) string { return l.path(append([]string{".dev"}, elem...)...) }

// temporalBin is HANDOFF_TEMPORAL_BIN (the Makefile exports it) or the
// binary `make tools` builds.
func (l layout) temporalBin() string {
	if p := os.Getenv("HANDOFF_TEMPORAL_BIN"); p != "" {
		return p
	}
	return l.path(".tools", "bin", "temporal")
}

// wiped lists the state that would refer to the previous run's Kafka data.
func (l layout) wiped() []string {
	return []string{
		l.dev("pg"), l.dev("deep"), l.dev("staging"),
		l.dev("temporal.db"), l.dev("temporal.db-wal"), l.dev("temporal.db-shm"), l.dev("temporal.db-journal"),
		l.dev("catalog-token"),
	}
}
