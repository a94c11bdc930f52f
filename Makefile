# The README's two commands: `make demo` and `make test`. Both create .venv when missing and
# install fdbu with its test and asr extras (the tests run the real NeMo transcription path).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO := build/demo

.PHONY: install demo test clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q --upgrade "pip>=24"
	$(BIN)/python -m pip install --disable-pip-version-check -q -e ".[test,asr]"
	touch $(STAMP)

install: $(STAMP)

# synthesize a small tree (all five subsets, 8 samples each), score it, plot F(t); then a second system
# on the same samples (system=prompt, the same seed), scored and compared with the first
demo: $(STAMP)
	rm -rf $(DEMO)
	$(BIN)/fdbu synth out=$(DEMO)/tree n=8 seed=0
	$(BIN)/fdbu score tree=$(DEMO)/tree plot=true
	$(BIN)/fdbu synth out=$(DEMO)/prompt n=8 seed=0 system=prompt
	$(BIN)/fdbu score tree=$(DEMO)/prompt plot=true
	$(BIN)/fdbu compare "trees=[$(DEMO)/tree,$(DEMO)/prompt]" "names=[mixed,prompt]" out=$(DEMO)/compare

test: $(STAMP)
	$(BIN)/python -m pytest -q

clean:
	rm -rf build $(VENV)
