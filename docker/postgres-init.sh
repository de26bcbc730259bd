#!/bin/sh
# Temporal keeps its own databases (temporal, temporal_visibility), created by its auto-setup as this role.
# The password comes from the environment (TEMPORAL_DB_PASSWORD, required by docker-compose.yml) and reaches
# SQL as a psql variable, quoted by psql, so no password is written into this repository.
# Like every docker-entrypoint-initdb.d script, this runs only when the data volume is first initialised.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE temporal WITH LOGIN PASSWORD :'temporal_password' CREATEDB;
SQL
