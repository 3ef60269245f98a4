#!/usr/bin/env bash
# The test suite (after `make lint`: ruff, mypy, import-linter): everything but the browser and live tests on SQLite;
# the live tests (marked live: real Redis, Celery workers, Daphne) and the API/persistence tests on PostgreSQL, the
# production database, with one of the suite's own when none answers on 127.0.0.1:5432; meanwhile the browser tests in
# their own pytest process (Playwright's sync API keeps an event loop running, which breaks every pytest-asyncio test
# collected after it), on SQLite as `make run` serves; then the front-end's node tests.
#
# The live tests mostly wait (a run's virtual time, a browser, a restarted server), so the pytest runs spread
# their test files over pytest-xdist workers: each worker has its own Redis (tests/pytest_redis.py) and test
# database, hence its own stacks. The schemathesis test runs on its own: its cases share one test id, which
# xdist would run once.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WORKERS=${WORKERS:-2}  # pytest-xdist workers for the tests beside the browser's
BROWSER_WORKERS=${BROWSER_WORKERS:-2}
FUZZ=tests/web/test_api_fuzz.py
status=0
passed=0
failed=0
log=$(mktemp)

# Add up the "N passed" / "N failed" (and errors) of a runner's summary for the closing line.
count() {
  local summary p f e
  summary=$(grep -E '[0-9]+ (passed|failed|errors?)' "$log" | grep -E ' in [0-9.]+s' | tail -1)
  p=$(grep -Eo '[0-9]+ passed' <<<"$summary" | grep -Eo '[0-9]+' || true)
  f=$(grep -Eo '[0-9]+ failed' <<<"$summary" | grep -Eo '[0-9]+' || true)
  e=$(grep -Eo '[0-9]+ errors?' <<<"$summary" | grep -Eo '[0-9]+' || true)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0} + ${e:-0}))
}

# A pass that collected nothing (pytest's exit code 5) fails: every pass here has tests to run.
run_pytest() {
  "$PY" -m pytest "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  count
  if [ $rc -eq 5 ]; then echo "== no tests collected: $*"; fi
  [ $rc -ne 0 ] && status=$rc
  return 0
}

# PostgreSQL for the live and persistence tests: the server on 127.0.0.1:5432 when it lets user postgres in,
# else a cluster of the suite's own in a temporary directory on a spare port (Debian's postgresql package,
# installed when missing as the browser's chromium is), stopped at the end. initdb and postgres refuse to run
# as root: as root they run as the package's `postgres` user. Each pass gets a database name of its own, so that
# two suites on one server do not drop each other's test databases.
pg_dir=""
pg_as=()
pg_bin=""
database=""
start_postgres() {
  if "$PY" - <<'PYEOF' 2>/dev/null
import psycopg
psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", connect_timeout=2).close()
PYEOF
  then
    database="postgres://postgres@127.0.0.1:5432/heartbeat_suite_$$"
    return 0
  fi
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$pg_bin" ] && [ "$(id -u)" = 0 ]; then
    echo "== installing Debian's postgresql for the live and persistence tests" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  fi
  if [ -z "$pg_bin" ]; then
    echo "== no PostgreSQL on 127.0.0.1:5432 and none installed (Debian: apt-get install postgresql)" >&2
    return 1
  fi
  pg_dir=$(mktemp -d /tmp/heartbeat-postgres.XXXXXX)
  if [ "$(id -u)" = 0 ]; then chown postgres: "$pg_dir"; pg_as=(runuser -u postgres --); fi
  local port
  port=$("$PY" -c 'from heartbeat_site.embedded_redis import free_port; print(free_port())')
  # Durability off (fsync, synchronous commit): a test cluster that is thrown away.
  "${pg_as[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -U postgres -A trust -E UTF8 --no-locale --no-sync \
      >"$pg_dir/initdb.log" 2>&1 \
    && "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 start -o \
      "-p $port -k $pg_dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      >/dev/null || { cat "$pg_dir"/*.log >&2; return 1; }
  database="postgres://postgres@127.0.0.1:$port/heartbeat_suite"
}
stop_postgres() {
  if [ -z "$pg_dir" ] && [ -n "$database" ]; then
    # pytest-django cannot drop a test database a stack's process still holds a connection to: drop ours by force
    "$PY" - "${database##*/}" <<'PYEOF' 2>/dev/null
import sys

import psycopg

with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True, connect_timeout=5) as db:
    test_name = f"test_{sys.argv[1]}"  # and test_<name>_gw<n> of the xdist workers
    names = [row[0] for row in db.execute("SELECT datname FROM pg_database WHERE datname = %s OR datname LIKE %s",
                                          [test_name, test_name.replace("_", "\\_") + "\\_gw%"])]
    for name in names:
        db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
PYEOF
  fi
  if [ -n "$pg_dir" ]; then
    "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate stop >/dev/null 2>&1
    rm -rf "$pg_dir"
  fi
}

# The browser tests run in a process of their own beside the rest (they wait on a browser and a
# live stack more than they compute). They get an embedded Redis of their own (REDIS_URL unset for
# them) and each pytest process has its own SQLite test database, so neither sees the other's runs.
browser_pid=""
browser_log=$(mktemp)
trap 'rm -f "$log" "$browser_log"; stop_postgres' EXIT
if [ -d tests/browser ] && find tests/browser -name 'test_*.py' | grep -q .; then
  if [ ! -x /usr/bin/chromium ]; then
    echo "== installing Debian's chromium for the browser tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
  env -u REDIS_URL "$PY" -m pytest tests/browser -q -n "$BROWSER_WORKERS" \
    --dist loadfile >"$browser_log" 2>&1 &
  browser_pid=$!
fi

echo "== pytest (all but tests/browser, the live tests and the API fuzz test) on SQLite"
run_pytest -p no:playwright --ignore=tests/browser --ignore="$FUZZ" -m "not live" -q -n "$WORKERS" --dist loadfile
echo "== pytest $FUZZ"
run_pytest -p no:playwright "$FUZZ" -q

if start_postgres; then
  echo "== pytest -m 'live or persistence' on PostgreSQL (${database%/*})"
  # The live tests (a run's stack of real processes, the database's connections cut among its faults) on the
  # database a class's server uses, and the API and persistence tests once more there.
  DATABASE_URL=$database run_pytest -p no:playwright tests/web -m "live or persistence" -q -n "$WORKERS" \
    --dist loadfile --create-db
else
  echo "== PostgreSQL could not be started: the live and persistence tests did not run"
  status=1
fi

if [ -n "$browser_pid" ]; then
  echo "== pytest tests/browser (ran beside the others)"
  wait "$browser_pid"
  rc=$?
  cat "$browser_log"
  cp "$browser_log" "$log"
  count
  [ $rc -ne 0 ] && status=$rc
fi

if [ -f package.json ] && grep -q '"test"' package.json; then
  echo "== npm test"
  npm test --silent 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  [ $rc -ne 0 ] && status=$rc
  p=$(grep -Eo '^# pass [0-9]+' "$log" | grep -Eo '[0-9]+' || true)
  f=$(grep -Eo '^# fail [0-9]+' "$log" | grep -Eo '[0-9]+' || true)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
fi

echo
echo "== whole suite (pytest runs and npm test)"
echo "all: $passed passed, $failed failed"
exit $status
