# The two commands that do everything on a fresh machine: `make serve` and `make test`.
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: serve test lint bench scenarios clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/olympus serve

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .

scenarios: $(STAMP)
	$(BIN)/olympus scenario tests/scenarios/*.yaml tests/scenarios/**/*.yaml

bench: $(STAMP)
	$(BIN)/python bench/rules_bench.py

clean:
	rm -rf $(VENV) var .pytest_cache
