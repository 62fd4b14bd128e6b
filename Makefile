# Every install step lives here, so a clean clone (and CI) needs nothing done by hand.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck unit unit-fast ext ext-e2e bench clean soak agents protocol checkers

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

## make demo: create the virtualenv, install, run the built-in example end to end.
demo: $(STAMP)
	$(PY) -m fresh_ls demo

## make agents: the real agent CLIs the proxy's end-to-end tests run (tests/proxy/test_agents_e2e.py),
## pinned, installed once under .cache/agents (gitignored); a second run installs nothing.
AGENTS              := .cache/agents
CLAUDE_CODE_VERSION := 2.1.332
CLAUDE_CODE_STAMP   := $(AGENTS)/claude-code/.installed-$(CLAUDE_CODE_VERSION)
CODEX_VERSION       := 0.171.0
CODEX_STAMP         := $(AGENTS)/codex/.installed-$(CODEX_VERSION)
PI_VERSION          := 0.73.1
PI_STAMP            := $(AGENTS)/pi/.installed-$(PI_VERSION)
AIDER_VERSION       := 0.86.2
AIDER_STAMP         := $(AGENTS)/aider/.installed-$(AIDER_VERSION)

# $(call npm_agent,DIR,PACKAGE@VERSION): a private npm prefix holding one pinned package.
define npm_agent
	rm -rf $(AGENTS)/$(1) && mkdir -p $(AGENTS)/$(1)
	cd $(AGENTS)/$(1) && echo '{"private": true}' > package.json && \
	  npm install --no-audit --no-fund --save-exact $(2)
endef

$(CLAUDE_CODE_STAMP):
	$(call npm_agent,claude-code,@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION))
	touch $@

$(CODEX_STAMP):
	$(call npm_agent,codex,@openai/codex@$(CODEX_VERSION))
	touch $@

$(PI_STAMP):
	$(call npm_agent,pi,@mariozechner/pi-coding-agent@$(PI_VERSION))
	touch $@

# aider is a Python program with its own pinned dependencies: a virtualenv of its own.
$(AIDER_STAMP):
	rm -rf $(AGENTS)/aider && $(PYTHON) -m venv $(AGENTS)/aider
	$(AGENTS)/aider/bin/python -m pip install -q aider-chat==$(AIDER_VERSION)
	touch $@

agents: $(CLAUDE_CODE_STAMP) $(CODEX_STAMP) $(PI_STAMP) $(AIDER_STAMP)

## make test: create the virtualenv with dev deps, build the extension, install the agent CLIs,
## run every test.
## make checkers: the model checker the protocol's Promela model needs (tests/model/test_spin.py,
## docs/guard.pml): Debian's spin, installed once when missing (root, or sudo without a password).
checkers:
	@command -v spin >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	  $$SUDO apt-get install -y -q spin >/dev/null 2>&1 || \
	  { $$SUDO apt-get update -q >/dev/null 2>&1 && $$SUDO apt-get install -y -q spin >/dev/null; }; }
	@command -v spin >/dev/null 2>&1 && echo "spin: $$(spin -V)"

test: $(STAMP) lint typecheck ext agents checkers unit

lint: $(STAMP)
	$(PY) -m ruff check .

typecheck: $(STAMP)
	$(PY) -m mypy

# pytest exits 5 when it collects no test; that must fail loudly, never pass silently.
## make unit-fast: the in-process tests alone (no server, agent or editor is started:
## tests/conftest.py IN_PROCESS, checked), for a quick loop while editing the core or engine.
unit-fast: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m "not process"

unit: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

ext:
	@if [ -f vscode-ext/package.json ]; then $(MAKE) -C vscode-ext build test; else echo "vscode-ext: nothing to build yet"; fi

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

## make protocol: regenerate fresh_ls/protocol/protocol.schema.json, the extension's
## protocol.generated.ts, fresh_ls/methods.py and fresh_ls/client/requests.py from the
## classes and method table of fresh_ls/protocol/ (tests/test_ext_contract.py checks all)
protocol: $(STAMP)
	$(PY) -m fresh_ls.protocol.ts

## make soak: the reliability suite and the protocol model at full counts (quick counts run
## in make test), one line of figures per test at the end (docs/reliability.md).
soak: $(STAMP)
	FRESH_LS_SOAK=1 $(PY) -m pytest -q -p no:cacheprovider tests/reliability tests/model

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
