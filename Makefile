# agentlake — every target creates .venv and installs what it needs on first use.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
AGENTLAKE := $(VENV)/bin/agentlake
STAMP  := $(VENV)/.installed
DEMO   := .demo

.DEFAULT_GOAL := help
.PHONY: help setup relink demo screenshot test test-fast lint lint-fixtures fixtures-manifest bench bench-smoke golden matrix clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11 or run 'make PYTHON=python3 ...'"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]' --config-settings editable_mode=strict
	@touch $(STAMP)

setup: $(STAMP) ## create .venv and install agentlake with its dev tools

# The strict editable install is a link tree: refresh it so new modules are importable,
# and compile its bytecode as a wheel install would (every CLI start reads it; the
# interpreter may be told not to write it).
relink: $(STAMP)
	@$(PY) -m pip install --quiet --no-deps -e . --config-settings editable_mode=strict
	@$(PY) -m compileall -q "$$($(PY) -c 'import agentlake, os; print(os.path.dirname(agentlake.__file__))')"

# The demo is the commands a user types, each printed before its output: a synthetic
# home written by the development-only generators (fixtures/synth), then agentlake itself.
demo: relink ## write a synthetic home of all seven agents, import it, then report, search (by words and by meaning), list and write the dashboard
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(PY) -m fixtures.synth --home $(DEMO)/home --seed 7
	$(AGENTLAKE) import --home $(DEMO)/home --catalog $(DEMO)/catalog.duckdb
	$(AGENTLAKE) report daily --breakdown --catalog $(DEMO)/catalog.duckdb
	$(AGENTLAKE) search "cache bug" --limit 5 --catalog $(DEMO)/catalog.duckdb
	$(AGENTLAKE) search "stale memoized results outliving their time-to-live" --mode semantic --limit 3 --catalog $(DEMO)/catalog.duckdb
	$(AGENTLAKE) sessions list --limit 5 --catalog $(DEMO)/catalog.duckdb
	$(AGENTLAKE) report html $(DEMO)/dashboard.html --catalog $(DEMO)/catalog.duckdb

screenshot: relink ## the README's picture of the demo home's dashboard (needs chromium)
	$(PY) -m fixtures.browser docs/dashboard.png

# One worker per core; a test module stays on one worker, so its shared homes are made once.
TEST_WORKERS ?= auto
# Test catalogs and homes go to memory (/dev/shm) when it has 4 GiB free: the tests commit
# and checkpoint thousands of small catalogs, whose syncs a disk makes the suite wait for.
# One directory per checkout, so two runs from two clones never clear each other's.
TEST_TMP ?= $(shell $(PYTHON) -c "import os, shutil, zlib; d = '/dev/shm'; ok = os.path.isdir(d) and os.access(d, os.W_OK) and shutil.disk_usage(d).free >= 4 << 30; print(f'{d}/agentlake-tests-{zlib.crc32(os.getcwd().encode()):08x}' if ok else '')")
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadscope $(if $(TEST_TMP),--basetemp=$(TEST_TMP))

# The memory the tests' catalogs took is given back when the run ends, passed or not.
test: relink lint-fixtures ## run the whole test suite (after the fixture hygiene gate)
	status=0; $(PYTEST) || status=$$?; $(if $(TEST_TMP),rm -rf $(TEST_TMP);) exit $$status

test-fast: relink ## the test suite without tests marked slow
	status=0; $(PYTEST) -m "not slow" || status=$$?; $(if $(TEST_TMP),rm -rf $(TEST_TMP);) exit $$status

# Every fixture pinned by its SHA-256 in fixtures/manifest.json, and no credential, e-mail
# address or real home path in one unless its entry allows the rule (canary homes).
lint-fixtures: relink ## the fixture hygiene gate
	$(PY) -m fixtures.hygiene

fixtures-manifest: relink ## pin the fixtures as they are (review what it reports first)
	$(PY) -m fixtures.hygiene --write

lint: relink ## ruff and mypy --strict
	$(VENV)/bin/ruff check pipeline extract transform load sql tests benchmarks fixtures
	$(VENV)/bin/mypy -p agentlake
	$(VENV)/bin/mypy tests fixtures

matrix: relink ## write providers.json, the conformance matrix, from the provider registry
	$(PY) -c "from agentlake.read.names import MATRIX_FILE, matrix_text; open(MATRIX_FILE, 'w').write(matrix_text())"

BENCH_PROVIDERS := claude,codex,gemini,cursor,copilot,opencode,factory

# ccusage, the daily report's point of comparison, from npm into .cache (skipped without npm:
# the benchmark then records the comparison as skipped).
CCUSAGE_DIR := .cache/ccusage
CCUSAGE_VERSION := 20.0.24

$(CCUSAGE_DIR)/node_modules/.bin/ccusage:
	@if command -v npm >/dev/null; then \
		npm install --silent --no-save --no-audit --no-fund --prefix $(CCUSAGE_DIR) ccusage@$(CCUSAGE_VERSION); \
	else echo "npm not found: the ccusage comparison will be skipped"; fi

bench: relink $(CCUSAGE_DIR)/node_modules/.bin/ccusage ## benchmark 1,000,000 generated events of all seven providers (writes test-results/benchmark.json)
	$(PY) -m benchmarks --events 1000000 --seed 1 --providers $(BENCH_PROVIDERS) --ccusage-dir $(CCUSAGE_DIR)

bench-smoke: relink ## a small benchmark run, budgets recorded but not enforced (test-results/benchmark-smoke.json)
	$(PY) -m benchmarks --events 4000 --seed 1 --providers $(BENCH_PROVIDERS) --record-only \
		--search-queries 50 --search-rounds 1 --report-samples 3 --cli-rounds 1 --no-cold-rerun \
		--out test-results/benchmark-smoke.json

golden: ## regenerate ccusage golden files (needs npm; see fixtures/README.md)
	npm install --no-save ccusage@20.0.24
	$(PY) fixtures/regen_golden.py

clean: ## remove the environment and generated files
	rm -rf $(VENV) $(DEMO) build dist test-results .cache .pytest_cache .mypy_cache .ruff_cache
