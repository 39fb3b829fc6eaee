#!/bin/sh
# Creates the namespace the worker uses and registers the supervisors'
# search attributes (all Keyword), so the Temporal UI can filter by them
# from the start. The worker registers missing ones itself at start
# (worker/searchattributes.go); this does it before any worker runs. Run by
# the one-shot temporal-setup service; everything is skipped when done.
set -eu

: "${TEMPORAL_ADDRESS:?}" "${SEARCH_ATTRIBUTES:?}"
ns="${TEMPORAL_NAMESPACE:-default}"
retention="${NAMESPACE_RETENTION:-72h}"

# retry runs a command until it succeeds, 30 tries 2s apart: a namespace
# just created takes a few seconds to be usable.
retry() {
	n=1
	until "$@"; do
		if [ "$n" -ge 30 ]; then
			echo "giving up: $*" >&2
			return 1
		fi
		n=$((n + 1))
		sleep 2
	done
}

healthy() {
	temporal operator cluster health --address "$TEMPORAL_ADDRESS" | grep -q SERVING
}

retry healthy
if ! temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$ns" >/dev/null 2>&1; then
	temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$ns" --retention "$retention"
fi

existing=$(retry temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" -n "$ns")
for name in $SEARCH_ATTRIBUTES; do
	if printf '%s\n' "$existing" | grep -qw "$name"; then
		echo "search attribute $name: registered"
		continue
	fi
	retry temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" -n "$ns" --name "$name" --type Keyword
	echo "search attribute $name: added"
done
