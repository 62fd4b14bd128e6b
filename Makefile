# Every install step lives here, so a clean clone (and CI) needs nothing done by hand.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck unit ext ext-e2e bench clean soak protocol

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

## make demo: create the virtualenv, install, run the built-in example end to end.
demo: $(STAMP)
	$(PY) -m fresh_ls demo

## make test: create the virtualenv with dev deps, build the extension, run every test.
test: $(STAMP) lint typecheck ext unit

lint: $(STAMP)
	$(PY) -m ruff check .

typecheck: $(STAMP)
	$(PY) -m mypy

# pytest exits 5 when it collects no test; that must fail loudly, never pass silently.
unit: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

ext:
	@if [ -f vscode-ext/package.json ]; then $(MAKE) -C vscode-ext build test; else echo "vscode-ext: nothing to build yet"; fi

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

## make protocol: regenerate fresh_ls/protocol.schema.json and the extension's
## protocol.generated.ts from fresh_ls/protocol.py (tests/test_ext_contract.py checks both)
protocol: $(STAMP)
	$(PY) -m fresh_ls.protocol_ts

## make soak: the reliability suite at full counts (quick counts run in make test), one line
## of figures per test at the end (docs/reliability.md).
soak: $(STAMP)
	FRESH_LS_SOAK=1 $(PY) -m pytest -q -p no:cacheprovider tests/reliability

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
