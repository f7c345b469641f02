# Two commands: `make chat` (run the app on embedded defaults) and `make test` (the whole suite; tests marked
# `mirror` run when AUTORECIPE_BRIDGE_GIT / AUTORECIPE_MCORE_GIT name the upstream git mirrors, else are deselected
# with a message naming the setting).
# Each creates or reuses .venv and installs exactly what it needs.
VENV ?= .venv
PY := $(VENV)/bin/python
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export GRADIO_ANALYTICS_ENABLED := False
export ANONYMIZED_TELEMETRY := False

.PHONY: chat test test-fast wheel-check eval install install-dev browser bench skills

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# Debian chromium for the browser test (never `playwright install`), with CJK fonts for the Chinese page.
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	@dpkg -s fonts-noto-cjk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq fonts-noto-cjk >/dev/null)

chat: install
	$(VENV)/bin/autorecipe ingest
	$(VENV)/bin/autorecipe chat

test: install-dev browser
	$(VENV)/bin/ruff check .
	$(PY) -m mypy
	$(PY) -m pytest

# The pure units: no embedding model, Chroma, torch, Gradio, browser, server, mirror, service or CLI run
# (pytest --fast, tests/conftest.py), one worker per core; pytest prints the time.
test-fast: install-dev
	$(PY) -m pytest -q --fast -n auto --durations=5

# Build the wheel, install it non-editable into a venv that borrows $(VENV)'s dependencies, ask from /tmp.
wheel-check: install
	VENV=$(VENV) bash .ci/wheel-check

# Golden Q&A evaluation with its gate (exits non-zero below the thresholds in evals/metrics.py).
eval: install-dev
	$(VENV)/bin/autorecipe ingest
	$(VENV)/bin/autorecipe eval --report evals/reports/latest $(EVAL_ARGS)

bench: install-dev
	for b in benchmarks/bench_*.py; do $(PY) $$b; done

# One coding-agent skill per bundled version and language, generated from its catalog (kept out of git).
SKILL_VERSIONS ?= 0.3.1 0.5.1 0.6.0 main
skills: install
	for v in $(SKILL_VERSIONS); do for l in en zh; do \
	  $(VENV)/bin/autorecipe skill export --version $$v --lang $$l --out skills/$$v-$$l || exit 1; done; done
