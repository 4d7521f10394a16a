"""A sample of bench/corpus_run.py (issue 34): the first rows of every dev and train file through the whole check,
lexical scorer, with no exception. The bench runs every row; this runs its code on 25 rows a file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "corpus_run.py"


def _corpus_run():
    # As `python bench/corpus_run.py` runs it: bench/ on the path, for its helpers (bench/shared_data.py).
    if str(BENCH.parent) not in sys.path:
        sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("corpus_run", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_run"] = module
    spec.loader.exec_module(module)
    return module


corpus_run = _corpus_run()
FILES = sorted(p for folder in ("dev", "train") for p in (corpus_run.DATA / folder).glob("*.jsonl"))


@pytest.mark.skipif(not FILES, reason=f"no shared data at {corpus_run.DATA} (CI has it beside the checkout)")
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_sample_of_every_corpus_file_checks_without_an_exception(path: Path) -> None:
    name, tally = corpus_run.run_file(path, 25)
    assert tally.rows == 25, name
    assert tally.exceptions == 0, tally.examples
