# groundwire: `make demo` and `make test` work on a fresh clone (they build .venv when it is absent).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch is installed first and pinned, so that no dependency can make pip resolve another (CUDA) build.
TORCH := torch==2.13.0
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha1sum | cut -c1-12)

# The formatted, strictly typed layers; the rest of the tree is linted (ruff check) but not yet reformatted.
FORMATTED := src/groundwire/core src/groundwire/scoring src/groundwire/pipeline.py

.PHONY: demo test lint env clean

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(TORCH)
	$(BIN)/python -m pip install -q -e ".[hf,train,serve,ray,dev,frames,eval,otel,adapters]" $(TORCH)
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

env: $(STAMP)

demo: $(STAMP)
	$(BIN)/groundwire check --context examples/refund_policy.md --context examples/shipping.md \
	    --answer @examples/answer.txt --question "$$(cat examples/question.txt)"

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check $(FORMATTED)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist src/*.egg-info
