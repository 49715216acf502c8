# The two commands of the README: `make run` (the main job) and `make test` (the project's tests).
# Both set up everything they need on a fresh machine: pip packages, Debian packages (as root),
# and the embedded cluster's binaries (built once per pinned version into ~/.cache/winsuite).
PYTHON ?= python3
# Debian packages: the real Linux node (`winsuite cluster deps`) and the dashboard's browser test.
BROWSER_PACKAGES = chromium

.PHONY: setup deps build run test lint unit integration bench

setup:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e '.[dev]'

deps: setup
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq >/dev/null && \
	  $$(winsuite cluster deps) $(BROWSER_PACKAGES) >/dev/null; \
	else \
	  echo "make: not root or no apt-get: skipping Debian packages (the real node and browser tests will skip)"; \
	fi

build: deps
	winsuite cluster build

# The benchmarks print figures; bench/compare_upstream.py and upstream_e2e.py also build upstream e2e.test.
bench: build
	winsuite cluster build --e2e-test
	for script in selection cluster_build runner upstream_e2e compare_upstream report_render; do $(PYTHON) -m bench.$$script || exit 1; done

# The main job: the default job on the embedded cluster, ending with a summary and the dashboard.
run: build
	winsuite run

lint: setup
	ruff check .
	mypy

unit: setup
	$(PYTHON) -m pytest -q tests/unit

# Integration tests start one embedded cluster for the session and always stop it.
integration: build
	$(PYTHON) -m pytest -q tests/integration

test: build lint
	$(PYTHON) -m pytest -q tests
