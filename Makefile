# The two commands of the README: `make run` (the main job) and `make test` (the project's tests).
# Both set up everything they need on a fresh machine: a virtual environment of the project's own (.venv; nothing
# is installed into the system Python), Debian packages (as root), and the embedded cluster's binaries (built once
# per pinned version into ~/.cache/winsuite, which every install of winsuite shares).
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
WINSUITE := $(VENV)/bin/winsuite
MIN_PYTHON := 3.11
# Debian packages: the real Linux node (`winsuite cluster deps`) and the dashboard's browser test.
BROWSER_PACKAGES = chromium

.PHONY: setup deps build run test test-kind check lint unit integration bench

# .venv is made with the machine's python3, and made again when that Python changes; winsuite (with its dev
# extras) is installed again when pyproject.toml or setup.py change. A stamp records what it was made from.
setup:
	@command -v $(PYTHON) >/dev/null || { echo "make: winsuite needs Python >= $(MIN_PYTHON); found no $(PYTHON)"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "make: winsuite needs Python >= $(MIN_PYTHON); found $$($(PYTHON) -V 2>&1)"; exit 1; }
	@python="$$($(PYTHON) -c 'import sys; print(sys.executable, sys.version.split()[0])')"; \
	packaging="$$(cat pyproject.toml setup.py | sha256sum | cut -c1-16)"; \
	if [ "$$(sed -n 1p $(VENV)/.made-from 2>/dev/null)" != "$$python" ] || [ ! -x $(VPY) ]; then \
	  if ! $(PYTHON) -c 'import ensurepip' 2>/dev/null; then \
	    package="python$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"; \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	      echo "make: installing $$package (python3 -m venv needs it)"; \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$$package" >/dev/null 2>&1 \
	        || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$$package" >/dev/null 2>&1; } \
	        || { echo "make: could not install $$package"; exit 1; }; \
	    else \
	      echo "make: python3 -m venv needs the Debian package $$package: run 'sudo apt-get install $$package'"; \
	      exit 1; \
	    fi; \
	  fi; \
	  echo "make: creating $(VENV) with $$python"; \
	  $(PYTHON) -m venv --clear $(VENV) || exit 1; \
	  rm -f $(VENV)/.made-from; \
	fi; \
	if [ "$$(sed -n 2p $(VENV)/.made-from 2>/dev/null)" != "$$packaging" ]; then \
	  echo "make: installing winsuite and its dev extras into $(VENV)"; \
	  $(VPY) -m pip install --quiet --disable-pip-version-check -e '.[dev]' || exit 1; \
	  printf '%s\n%s\n' "$$python" "$$packaging" > $(VENV)/.made-from; \
	fi

deps: setup
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq >/dev/null && \
	  $$($(WINSUITE) cluster deps) $(BROWSER_PACKAGES) >/dev/null; \
	else \
	  echo "make: not root or no apt-get: skipping Debian packages (the real node and browser tests will skip)"; \
	fi

build: deps
	$(WINSUITE) cluster build

# The benchmarks print figures; bench/compare_upstream.py and upstream_e2e.py also build upstream e2e.test.
bench: build
	$(WINSUITE) cluster build --e2e-test
	for script in selection cluster_build runner upstream_e2e compare_upstream report_render report_remote in_cluster; do \
	  $(VPY) -m bench.$$script || exit 1; done

# The main job: the default job on the embedded cluster, ending with a summary and the dashboard.
run: build
	@$(WINSUITE) run; status=$$?; \
	echo "make: winsuite is installed in $(VENV): 'source $(VENV)/bin/activate' to type winsuite commands" \
	     "(or run $(CURDIR)/$(WINSUITE))"; \
	exit $$status

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The quick tier, for every commit: lint, type check, unit tests and goldens; no cluster, about 1.5 minutes.
check: lint
	$(VPY) -m pytest -q -n 2 tests/unit

unit: setup
	$(VPY) -m pytest -q tests/unit

# Integration tests share one embedded cluster between three pytest-xdist workers (the tests that disrupt it run
# alone, last: tests/integration/conftest.py); the session starts it and always stops it.
XDIST := -n 3 --dist loadgroup --no-loadscope-reorder
integration: build
	$(VPY) -m pytest -q $(XDIST) tests/integration

# The upstream engine's tests run e2e.test, and the tests of a cluster winsuite did not make run kwokctl: both are
# built once per pinned version, like the cluster. The kind node
# image (12-18 min cold) is built by the test session in the background while the embedded cluster's tests run.
# The 25 slowest tests and the time per test file are listed at the end: where the time goes.
test: build lint
	$(WINSUITE) cluster build --e2e-test --test-tools
	$(VPY) -m pytest -q $(XDIST) --durations=25 tests

# The kind target's tests alone (as root, with podman and debootstrap).
test-kind: build
	$(VPY) -m pytest -q -rs tests/integration/test_kind_cluster.py tests/integration/test_kind_teardown.py
