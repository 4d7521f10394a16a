"""A sample of bench/corpus_run.py (issue 34): the first rows of every dev and train file through the whole check,
lexical scorer, with no exception. The bench runs every row; this runs its code on 25 rows a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_scripts import load_bench

corpus_run = load_bench("corpus_run")
FILES = sorted(p for folder in ("dev", "train") for p in (corpus_run.DATA / folder).glob("*.jsonl"))


@pytest.mark.skipif(not FILES, reason=f"no shared data at {corpus_run.DATA} (CI has it beside the checkout)")
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_sample_of_every_corpus_file_checks_without_an_exception(path: Path) -> None:
    name, tally = corpus_run.run_file(path, 25)
    assert tally.rows == 25, name
    assert tally.exceptions == 0, tally.examples
