# Starts a throwaway PostgreSQL server for memlife's store tests. Source this file, then call
# memlife_pg_start: it installs PostgreSQL from Debian's packages if it is missing, creates a
# cluster of its own in a temporary directory (never touches the machine's default cluster),
# starts it on 127.0.0.1, creates the role and database, and exports MEMLIFE_PG_URL,
# MEMLIFE_PG_USER, MEMLIFE_PG_PASSWORD, MEMLIFE_REQUIRE_PG=1, and MEMLIFE_PG_CTL and
# MEMLIFE_PG_DATA (pg_ctl and the cluster's directory, for the test that restarts the server). Every step is idempotent: a
# cluster left running by an earlier run is reused. memlife_pg_stop stops the server again if
# memlife_pg_start started it. Needs root (CI runs as root) or a user that can run initdb.

MEMLIFE_PG_PORT="${MEMLIFE_PG_PORT:-55432}"
MEMLIFE_PG_DIR="${MEMLIFE_PG_DIR:-/tmp/memlife-ci-postgres-${MEMLIFE_PG_PORT}}"
MEMLIFE_PG_STARTED=0

memlife_pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

# Runs a command as the postgres user when we are root (initdb refuses to run as root).
memlife_pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then
    (cd /tmp && runuser -u postgres -- "$@")
  else
    (cd /tmp && "$@")
  fi
}

memlife_pg_psql() {
  memlife_pg_as_owner "$(memlife_pg_bin)/psql" -h "$MEMLIFE_PG_DIR" -p "$MEMLIFE_PG_PORT" -U postgres \
    -d postgres -v ON_ERROR_STOP=1 -qtA "$@"
}

memlife_pg_start() {
  local bin
  bin="$(memlife_pg_bin)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "memlife: installing PostgreSQL from Debian's packages"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
    bin="$(memlife_pg_bin)"
  fi
  if [ ! -f "$MEMLIFE_PG_DIR/PG_VERSION" ]; then
    echo "memlife: creating a PostgreSQL cluster in $MEMLIFE_PG_DIR"
    rm -rf "$MEMLIFE_PG_DIR"
    mkdir -p "$MEMLIFE_PG_DIR"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$MEMLIFE_PG_DIR"
    chmod 700 "$MEMLIFE_PG_DIR"
    memlife_pg_as_owner "$bin/initdb" -D "$MEMLIFE_PG_DIR" -U postgres --encoding=UTF8 --no-locale \
      --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  fi
  if memlife_pg_as_owner "$bin/pg_ctl" -D "$MEMLIFE_PG_DIR" status >/dev/null 2>&1; then
    echo "memlife: PostgreSQL already running in $MEMLIFE_PG_DIR"
  else
    echo "memlife: starting PostgreSQL on 127.0.0.1:$MEMLIFE_PG_PORT"
    memlife_pg_as_owner "$bin/pg_ctl" -D "$MEMLIFE_PG_DIR" -l "$MEMLIFE_PG_DIR/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $MEMLIFE_PG_PORT -k $MEMLIFE_PG_DIR" start >/dev/null
    MEMLIFE_PG_STARTED=1
  fi
  if [ "$(memlife_pg_psql -c "SELECT 1 FROM pg_roles WHERE rolname = 'memlife'")" != 1 ]; then
    memlife_pg_psql -c "CREATE ROLE memlife LOGIN PASSWORD 'memlife'"
  fi
  if [ "$(memlife_pg_psql -c "SELECT 1 FROM pg_database WHERE datname = 'memlife'")" != 1 ]; then
    memlife_pg_psql -c "CREATE DATABASE memlife OWNER memlife"
  fi
  export MEMLIFE_PG_URL="jdbc:postgresql://127.0.0.1:${MEMLIFE_PG_PORT}/memlife"
  export MEMLIFE_PG_USER=memlife
  export MEMLIFE_PG_PASSWORD=memlife
  export MEMLIFE_REQUIRE_PG=1
  # for the shared-log test that restarts the server mid-run (pg_ctl restart -m fast)
  export MEMLIFE_PG_CTL="$bin/pg_ctl"
  export MEMLIFE_PG_DATA="$MEMLIFE_PG_DIR"
}

memlife_pg_stop() {
  if [ "$MEMLIFE_PG_STARTED" = 1 ]; then
    memlife_pg_as_owner "$(memlife_pg_bin)/pg_ctl" -D "$MEMLIFE_PG_DIR" -m fast -w stop >/dev/null || true
  fi
}
