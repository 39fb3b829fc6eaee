# Developer entry points. `make test` is the test command; CI runs it
# through .ci/run.

TEMPORAL_CLI_VERSION := v1.5.1
TOOLS_BIN := $(CURDIR)/.tools/bin
TEMPORAL := $(TOOLS_BIN)/temporal

# Tests (internal/testenv) and the dev stack run this binary as the
# Temporal dev server.
export HANDOFF_TEMPORAL_BIN := $(TEMPORAL)

.PHONY: tools build test test-ui dev vet bench fuzz chaos

tools: $(TEMPORAL)

# A cold build takes about ten minutes.
$(TEMPORAL):
	GOBIN=$(TOOLS_BIN) go install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_CLI_VERSION)

build:
	mkdir -p .dev/bin
	go build -o .dev/bin/ ./worker ./starter ./devstack

test: tools
	go test -count=1 -timeout 20m ./...

# Browser test of the Temporal UI against a fresh dev stack (uitest/run.sh):
# needs Debian's chromium and `npm ci --prefix uitest`; rewrites
# docs/img/temporal-ui.png.
test-ui: tools build
	uitest/run.sh

# The benchmark (bench/): brings up its own stack and a worker process,
# prints a markdown table and writes bench-result.json. BENCH_FLAGS passes
# flags, e.g. BENCH_FLAGS="-events 500000 -cpuprofile cpu".
BENCH_FLAGS ?=
bench: tools build
	go build -o .dev/bin/ ./bench
	test -d bench/peer/node_modules/@duckdb/node-api || npm ci --prefix bench/peer --no-audit --no-fund
	.dev/bin/bench -worker .dev/bin/worker $(BENCH_FLAGS)

dev: tools build
	.dev/bin/devstack

# The long form of the fault-injection suite (e2e/chaos; `make test` runs
# its short form): workers SIGKILLed, Postgres, Temporal and Kafka stopped
# or cut off while events are produced, every event counted. Each scenario
# prints a CHAOS-RESULT line and appends it, as JSON, to CHAOS_REPORT.
CHAOS_REPORT ?= .dev/chaos-report.jsonl

chaos: tools
	mkdir -p $(dir $(abspath $(CHAOS_REPORT)))
	rm -f $(abspath $(CHAOS_REPORT))
	HANDOFF_CHAOS=long HANDOFF_CHAOS_REPORT=$(abspath $(CHAOS_REPORT)) \
		go test -count=1 -v -parallel 2 -timeout 60m ./e2e/chaos

vet:
	go vet ./...

# Runs every fuzz target (each func Fuzz* in a *_test.go) for FUZZTIME,
# one after the other: go test -fuzz takes one target at a time. A crash
# stops it and is written to the package's testdata/fuzz/<target>/, where
# plain `go test` replays it from then on. Minimizing each new input is
# bounded too (go's default, 60s, would use up FUZZTIME on a deep one).
# hack/fuzz-one.sh runs each, and repeats once a run that only hit the
# fuzzing coordinator's end-of-time race (no failing input written).
FUZZTIME ?= 20s
FUZZMINIMIZETIME ?= 5s

fuzz:
	@set -e; \
	for pkg in $$(grep -rl --include='*_test.go' --exclude-dir=.git --exclude-dir=.tools --exclude-dir=.dev --exclude-dir=node_modules '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		names=$$(go test -list '^Fuzz' $$pkg); \
		for name in $$(printf '%s\n' "$$names" | grep '^Fuzz'); do \
			echo "--- fuzz $$pkg $$name for $(FUZZTIME)"; \
			hack/fuzz-one.sh $$pkg $$name $(FUZZTIME) $(FUZZMINIMIZETIME); \
		done; \
	done
