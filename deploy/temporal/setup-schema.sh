#!/bin/sh
# Creates Temporal's two databases in temporal-postgres and brings their
# schemas to the version of the admin-tools image. Run by the one-shot
# temporal-schema service on every `docker compose up`: each step is
# idempotent (create keeps an existing database, setup-schema keeps a newer
# version, update-schema applies only the missing versions), so a newer
# image upgrades the schema in place.
set -eu

: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
port="${DB_PORT:-5432}"
schema=/etc/temporal/schema/postgresql/v12

# sql DB COMMAND [ARGS...] runs one temporal-sql-tool command on DB; the
# tool reads the password from SQL_PASSWORD.
sql() {
	db=$1
	shift
	temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$port" -u "$POSTGRES_USER" --db "$db" "$@"
}

for pair in temporal:temporal temporal_visibility:visibility; do
	name=${pair%%:*}
	dir=$schema/${pair#*:}/versioned
	sql "$name" create
	sql "$name" setup-schema -v 0.0
	sql "$name" update-schema -d "$dir"
	echo "database $name ready"
done
