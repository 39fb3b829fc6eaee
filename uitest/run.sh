#!/usr/bin/env bash
# `make test-ui`: starts the dev stack (.dev/bin/devstack, log in
# .dev/uitest-devstack.log), waits for the Temporal UI, the worker's /readyz
# and the supervisor `wiki` RUNNING, runs the browser test (node --test
# uitest/), then stops the stack with SIGTERM, also when the test fails or
# this script is interrupted. Exits with the test's status.
#
# Needs `make build tools` (the Makefile target does both), Debian's
# chromium (/usr/bin/chromium) and `npm ci --prefix uitest`.
set -euo pipefail
cd "$(dirname "$0")/.."

ui=http://localhost:8233
worker=http://localhost:8081
supervisor=wiki
startup_timeout=${UITEST_STARTUP_TIMEOUT:-180} # seconds for the stack to come up
log=.dev/uitest-devstack.log

die() {
	echo "uitest: $*" >&2
	exit 1
}
[ -x .dev/bin/devstack ] && [ -x .dev/bin/starter ] || die "no .dev/bin/devstack or starter: run \`make build\` (or \`make test-ui\`)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || die "no ${CHROMIUM:-/usr/bin/chromium}: install Debian's chromium (apt-get install chromium)"
[ -d uitest/node_modules/playwright-core ] || die "no uitest/node_modules/playwright-core: run \`npm ci --prefix uitest\`"

# A stack already up (`make dev`) would answer the waits below for ours,
# which then fails on its busy ports: say so instead.
if curl -fsS --max-time 2 -o /dev/null "$ui/" 2>/dev/null; then
	die "$ui already answers: stop the running dev stack (make dev) first"
fi

mkdir -p .dev
started=$(date +%s)
echo "uitest: starting .dev/bin/devstack (log: $log)"
.dev/bin/devstack >"$log" 2>&1 &
devstack=$!

# stop_devstack sends SIGTERM and waits for devstack to unwind (the worker
# gets up to 30s to finish its activities, Temporal 20s); a devstack still
# there after 90s is killed.
stop_devstack() {
	[ -n "${devstack:-}" ] || return 0
	local pid=$devstack code=0
	devstack=""
	if kill -0 "$pid" 2>/dev/null; then
		echo "uitest: stopping devstack (SIGTERM)"
		kill -TERM "$pid" 2>/dev/null || true
		local waited=0
		while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 90 ]; do
			sleep 1
			waited=$((waited + 1))
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "uitest: devstack still running after 90s: SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || code=$?
	if [ "$code" -ne 0 ]; then
		echo "uitest: devstack exited with status $code; last lines of $log:" >&2
		tail -n 30 "$log" >&2 || true
	else
		echo "uitest: devstack stopped"
	fi
}
trap stop_devstack EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_for DESCRIPTION COMMAND...: runs COMMAND every second until it
# succeeds; fails when devstack exits or the startup timeout passes.
wait_for() {
	local what=$1
	shift
	until "$@" >/dev/null 2>&1; do
		if ! kill -0 "$devstack" 2>/dev/null; then
			echo "uitest: devstack exited while waiting for $what; last lines of $log:" >&2
			tail -n 30 "$log" >&2 || true
			exit 1
		fi
		if [ $(($(date +%s) - started)) -ge "$startup_timeout" ]; then
			echo "uitest: no $what after ${startup_timeout}s; last lines of $log:" >&2
			tail -n 30 "$log" >&2 || true
			exit 1
		fi
		sleep 1
	done
	echo "uitest: $what after $(($(date +%s) - started))s"
}

supervisor_running() {
	.dev/bin/starter status "$supervisor" -o json --address 127.0.0.1:7233 --namespace default |
		node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.exit(JSON.parse(s).state === "RUNNING" ? 0 : 1))'
}

wait_for "Temporal UI at $ui" curl -fsS --max-time 2 -o /dev/null "$ui/"
wait_for "worker ready ($worker/readyz)" curl -fsS --max-time 2 -o /dev/null "$worker/readyz"
wait_for "supervisor $supervisor RUNNING" supervisor_running

status=0
node --test uitest/ || status=$?
echo "uitest: browser test finished with status $status after $(($(date +%s) - started))s"
stop_devstack
exit "$status"
