# Heartbeat Classroom: `make run` serves on http://127.0.0.1:$(PORT); `make classroom` serves the room's network
# (ROOM=<interface|address|host name> to choose its address); `make test` runs everything.
SHELL := /bin/bash
VENV ?= .venv
# what .venv is built from: see scripts/pick-python (delete .venv to rebuild it from another)
PYTHON ?= $(shell scripts/pick-python)
PY := $(VENV)/bin/python
REQ_STAMP := $(VENV)/.requirements.stamp
NPM_STAMP := node_modules/.install.stamp
PORT ?= 8000
export PORT

.PHONY: setup python-deps npm-deps messages db run classroom test lint bench golden

setup: python-deps npm-deps messages db

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when a file of requirements/ changed. A checkout gets requirements/dev.txt: the runtime
# (requirements/runtime.txt, all a production install needs) with the test, lint and bench packages.
$(REQ_STAMP): $(wildcard requirements/*.txt) | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements/dev.txt
	touch $(REQ_STAMP)

python-deps: $(REQ_STAMP)

npm-deps:
	@if [ -f package.json ]; then \
	  if [ -f package-lock.json ]; then lock=package-lock.json; else lock=package.json; fi; \
	  if [ ! -f $(NPM_STAMP) ] || [ $$lock -nt $(NPM_STAMP) ]; then \
	    if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi \
	      && touch $(NPM_STAMP); \
	  fi; \
	fi

messages: python-deps
	@if [ -d locale ] && find locale -name '*.po' | grep -q .; then \
	  command -v msgfmt >/dev/null || { apt-get update -qq && apt-get install -y -qq gettext; }; \
	  $(PY) manage.py compilemessages --ignore=.venv --ignore=node_modules -v 0; \
	fi

db: python-deps
	$(PY) manage.py migrate --no-input -v 0
	$(PY) manage.py load_builtins

run: setup
	$(PY) manage.py runstack --port $(PORT)

# A class from this laptop: DEBUG off, static files collected, served on every address; prints the room's URL and QR.
classroom: setup
	HEARTBEAT_CLASSROOM=1 $(PY) manage.py runstack --port $(PORT)

# ruff, then mypy on what [tool.mypy] in pyproject.toml lists
lint: python-deps
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports

test: setup lint
	bash scripts/run-tests.sh

# Rewrite the golden timelines of the built-ins (tests/golden/) after a deliberate change of behaviour.
golden: python-deps
	$(PY) -m tests.simulation.golden

bench: setup
	$(PY) bench/fanout_bench.py
	$(PY) bench/simulation_bench.py
	$(PY) bench/browser_bench.py
	$(PY) bench/phone_bench.py
	$(PY) bench/large_bench.py
	$(PY) bench/recovery_bench.py
	$(PY) bench/kubectl_bench.py
	$(PY) bench/seek_bench.py
	$(PY) bench/replay_bench.py
	$(PY) bench/lighthouse_bench.py
