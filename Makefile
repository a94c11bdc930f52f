# The README's two commands: `make demo` and `make test`. Both create .venv when missing and
# install fdbu with its test, asr, cluster and docs extras (the tests run the real NeMo transcription
# path and a real one-node SLURM cluster).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO := build/demo

.PHONY: install demo docs test quick lint bytecode clean cluster-tools system-tools browser-tools latex-tools

$(STAMP): pyproject.toml
	@echo "fdbu: installing into $(VENV): torch 2.9.1 (CUDA build), NeMo 3.0.0 and the test, cluster and docs extras," \
	  "about 7 GB: about 7 minutes on a fresh machine, 2-3 minutes from pip's cache"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q --upgrade "pip>=24"
	$(BIN)/python -m pip install --disable-pip-version-check -q -e ".[test,asr,cluster,docs]"
	touch $(STAMP)
	@echo "fdbu: installed"

# the numba kernels compiled ahead of time (kernels/_compiled*.so; fdbu.kernels.aot loads them, so a run imports no
# numba): built after the install and again whenever a kernel's source changes; about 30 s
AOT := kernels/_compiled.json
$(AOT): $(STAMP) kernels/*.py fdbu/common/compile_kernels.py
	$(BIN)/python -W ignore::DeprecationWarning -m fdbu.common.compile_kernels

install: $(STAMP) $(AOT)

# synthesize a small tree (all five subsets, 8 samples each), score it (with FD-Bench's and VideoFDB's columns beside
# the unified metrics), plot F(t); then a second system on the same samples (system=prompt, the same seed), scored
# and compared with the first; then the report site of both (build/demo/report/index.html, its path printed last)
demo: $(STAMP) $(AOT)
	rm -rf $(DEMO)
	$(BIN)/fdbu synth out=$(DEMO)/tree n=8 seed=0
	$(BIN)/fdbu score tree=$(DEMO)/tree plot=true "views=[fdbench,videofdb]"
	$(BIN)/fdbu synth out=$(DEMO)/prompt n=8 seed=0 system=prompt
	$(BIN)/fdbu score tree=$(DEMO)/prompt plot=true "views=[fdbench,videofdb]"
	$(BIN)/fdbu compare "trees=[$(DEMO)/tree,$(DEMO)/prompt]" "names=[mixed,prompt]" out=$(DEMO)/compare
	$(BIN)/fdbu report "trees=[$(DEMO)/tree,$(DEMO)/prompt]" "names=[mixed,prompt]" out=$(DEMO)/report \
	  report.compare=$(DEMO)/compare

# the one-node SLURM cluster the cluster tests start (Debian packages; skipped with a reason if they
# cannot be installed, e.g. without root)
cluster-tools:
	@command -v slurmctld >/dev/null && command -v munged >/dev/null || \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	    --no-install-recommends slurm-wlm munge >/dev/null 2>&1) || \
	   echo "slurm-wlm and munge could not be installed: the SLURM tests will be skipped")

# the FFmpeg libraries TorchCodec loads (torchaudio.load's backend), for the test that checks the
# loader fdbu hands the official scripts against torchaudio.load itself
system-tools: cluster-tools browser-tools latex-tools
	@ldconfig -p | grep -q libavformat || \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ffmpeg >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	    --no-install-recommends ffmpeg >/dev/null 2>&1) || \
	   echo "the FFmpeg libraries could not be installed: the torchaudio.load test will be skipped")

# pdflatex (Debian's texlive-latex-recommended, which has booktabs), for the test that compiles leaderboard.tex
# (skipped with a reason if it cannot be installed)
latex-tools:
	@command -v pdflatex >/dev/null || \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends texlive-latex-recommended >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	    --no-install-recommends texlive-latex-recommended >/dev/null 2>&1) || \
	   echo "texlive could not be installed: the LaTeX compile tests will be skipped")

# Chromium, for the test that opens `fdbu report`'s site in a real browser (skipped with a reason if it
# cannot be installed)
browser-tools:
	@command -v chromium >/dev/null || \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	    --no-install-recommends chromium >/dev/null 2>&1) || \
	   echo "chromium could not be installed: the browser test of fdbu report will be skipped")

# lint and types first (ruff: pyflakes and bugbear; mypy), then the suite on three workers (two cores: a third
# fills the time the tests wait on processes, a cluster, a browser; measured 350 s against two's 366 s), each taking
# whole test files (the SLURM tests share one cluster, so one file, one worker), the longest first and NeMo's files
# on one worker (tests/conftest.py: LONGEST_FIRST, NEMO_FILES), the 15 slowest tests listed (four workers measured
# 413 s against three's 399 s)
XDIST := -n 3 --dist loadfile
test: $(STAMP) $(AOT) system-tools lint bytecode
	$(BIN)/python -m pytest -q $(XDIST) --durations=15

# the inner loop: every test not marked slow (a second or more: a process, a model, a full flow), under 90 s on 2 cores
quick: $(STAMP) $(AOT) bytecode
	$(BIN)/python -m pytest -q $(XDIST) -m "not slow"

# the project's own modules compiled once (their __pycache__, which git ignores): the suite starts some 150 fresh
# Python processes, and where PYTHONDONTWRITEBYTECODE is set (as on the CI machine) each compiled fdbu from its
# source again, 0.08 s of CPU a process; a module changed later is compiled from source until the next run
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q fdbu hydra_plugins kernels tests benchmarks

# the documentation site (docs/: Sphinx with MyST Markdown), offline and strict: a broken link, a missing reference or
# a page outside the navigation fails it; open build/docs/html/index.html from disk (the suite builds it too, and
# checks it in headless Chromium: tests/test_docs.py)
docs: $(STAMP)
	$(BIN)/python -m sphinx -b html -W --keep-going -n -q docs build/docs/html
	@echo "fdbu: the docs are in build/docs/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check fdbu kernels hydra_plugins tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf build $(VENV) kernels/_compiled*
	find fdbu hydra_plugins kernels tests benchmarks -name __pycache__ -type d -prune -exec rm -rf {} +
