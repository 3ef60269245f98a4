#!/usr/bin/env bash
# The test suite (after `make lint`: ruff and mypy): everything but the browser tests, the
# API/persistence tests again on PostgreSQL when one answers, and meanwhile the browser tests in
# their own pytest process (Playwright's sync API keeps an event loop running, which breaks every
# pytest-asyncio test collected after it); then the front-end's node tests.
#
# The live tests mostly wait (a run's virtual time, a browser, a restarted server), so both pytest
# runs spread their test files over pytest-xdist workers: each worker has its own Redis
# (heartbeat_site/testing/pytest_redis.py) and SQLite test database, hence its own stacks. The
# schemathesis test runs on its own: its cases share one test id, which xdist would run once.
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

# pytest exits 5 when it collected nothing: that is not a failure of the suite.
run_pytest() {
  "$PY" -m pytest "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  count
  if [ $rc -eq 5 ]; then echo "(no tests collected: $*)"; rc=0; fi
  [ $rc -ne 0 ] && status=$rc
  return 0
}

# The browser tests run in a process of their own beside the rest (they wait on a browser and a
# live stack more than they compute). They get an embedded Redis of their own (REDIS_URL unset for
# them) and each pytest process has its own SQLite test database, so neither sees the other's runs.
browser_pid=""
browser_log=$(mktemp)
trap 'rm -f "$log" "$browser_log"' EXIT
if [ -d tests/browser ] && find tests/browser -name 'test_*.py' | grep -q .; then
  if [ ! -x /usr/bin/chromium ]; then
    echo "== installing Debian's chromium for the browser tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
  env -u REDIS_URL DJANGO_ALLOW_ASYNC_UNSAFE=true "$PY" -m pytest tests/browser -q -n "$BROWSER_WORKERS" \
    --dist loadfile >"$browser_log" 2>&1 &
  browser_pid=$!
fi

echo "== pytest (all but tests/browser and the API fuzz test)"
run_pytest -p no:playwright --ignore=tests/browser --ignore="$FUZZ" -q -n "$WORKERS" --dist loadfile
echo "== pytest $FUZZ"
run_pytest -p no:playwright "$FUZZ" -q

if "$PY" - <<'PYEOF' 2>/dev/null
import psycopg
psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=2).close()
PYEOF
then
  echo "== pytest -m persistence on PostgreSQL (127.0.0.1:5432)"
  # The API and persistence tests, and the live tests of what the database must survive (marked
  # persistence: a driver whose connections are cut, commands across restarts). The other live tests
  # exercise Redis, the workers and the servers, which do not change with the database: once is enough.
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/test run_pytest -p no:playwright tests/web -m persistence -q --create-db
else
  echo "== PostgreSQL not reachable on 127.0.0.1:5432: persistence tests ran on SQLite only"
fi

if [ -n "$browser_pid" ]; then
  echo "== pytest tests/browser (ran beside the others)"
  wait "$browser_pid"
  rc=$?
  cat "$browser_log"
  cp "$browser_log" "$log"
  count
  [ $rc -ne 0 ] && [ $rc -ne 5 ] && status=$rc
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
