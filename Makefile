# The two commands that do everything on a fresh machine: `make serve` and `make test`.
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# pytest's processes under `make test`: one per core the suite may run on. (Twice as many ran
# it hardly sooner, and lagged the event loops of the servers the tests start: a lagging server
# refuses new rooms.)
TEST_WORKERS ?= $(shell nproc)

.PHONY: serve test lint bench scenarios clean browser redis valgrind native

# The interpreter of .venv, chosen when .venv is made (`make clean` forgets it): Debian's
# python3.11 where the machine has one with its venv module and headers (mypyc), installed from
# Debian if missing and that works; else the first python3 on PATH. Debian's is built with
# profile-guided and link-time optimisation, as the python:3.11-slim image of deploy/Dockerfile
# is; this box's pyenv build, without them (and configured --enable-shared), ran the same
# commands in 13 % more instructions (docs/performance.md).
$(BIN)/python:
	@if test -x /usr/bin/python3.11 && command -v dpkg >/dev/null && { \
		dpkg -s python3.11-venv python3.11-dev >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11-venv python3.11-dev; \
		} >/dev/null 2>&1; }; \
	then /usr/bin/python3.11 -m venv $(VENV); else python3 -m venv $(VENV); fi

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# The service starts at once on what there is (the interpreted source before the first build)
# while the compiled core is built in the background for the next start (olympus/build_native.py).
# `make serve SERVE_ARGS="--port 8001"`: options of `olympus serve`.
serve: $(STAMP)
	$(BIN)/python -m olympus.build_native build --background
	$(BIN)/olympus serve $(SERVE_ARGS)

# The compiled core is built (without a profile, unless a build of this source is there) while
# ruff and mypy run. Then the suite runs on it: in parallel (tests/conftest.py), but for the
# browser tests, which then run alone, one after another (their clicks race a busy box).
test: $(STAMP) browser redis valgrind
	$(BIN)/python -m olympus.build_native build --quick & built=$$!; \
	$(BIN)/ruff check . && $(BIN)/mypy; checked=$$?; \
	wait $$built && exit $$checked
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --ignore=tests/web
	$(BIN)/pytest tests/web

# The rules and the command path compiled by mypyc (olympus/build_native.py), as one build,
# profile-guided with GCC: made again when its source or its recipe changed; without a C
# compiler the source runs interpreted, with the same results.
native: $(STAMP)
	$(BIN)/python -m olympus.build_native build

# The UI tests drive Debian's Chromium through Playwright (no browser download).
browser:
	@test -x /usr/bin/chromium || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The Redis Cluster tests run Debian's redis-server (7.x): 3 masters + 3 replicas on loopback.
redis:
	@test -x /usr/bin/redis-server -a -x /usr/bin/redis-cli || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }

# load_bench.py and lifecycle_bench.py --callgrind count the server's instructions under
# Debian's valgrind.
valgrind:
	@test -x /usr/bin/valgrind -a -x /usr/bin/callgrind_control || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }

lint: $(STAMP)
	$(BIN)/ruff check .

scenarios: $(STAMP)
	$(BIN)/olympus scenario tests/scenarios

bench: $(STAMP)
	$(BIN)/python bench/rules_bench.py
	$(BIN)/python bench/load_bench.py

clean:
	rm -rf $(VENV) var .pytest_cache service/build
