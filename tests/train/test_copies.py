"""Copy pairs (issue 49): what each kind claims holds, the figures read as the verifier reads them, and the mix
replays the prepared one."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from groundwire.core.figures import canonical_text
from groundwire.train.copies import CopySpec, build, clause, copy_pairs, edit
from groundwire.train.data import Pair
from groundwire.train.perturb import CONTRADICTION, ENTAILMENT, NEUTRAL, Doc, split_sentences

ARTICLES = [
    f"Town {i} opened a library on 4 May {1990 + i}. It has {1000 + i} books and costs $1,200 a year to run. "
    f"Mayor Jane Doe{i} said the library is open from 9am to 5pm, and Tom Reed{i} agreed. "
    f"The library is not open on Sundays. Visitors came from Leeds and York in June."
    for i in range(30)
]


def _words(text: str) -> list[str]:
    """Case, punctuation and articles left out: what an edited copy keeps of its sentence."""
    return [w for w in re.findall(r"\w+", text.lower()) if w not in ("a", "an", "the")]


def _pairs(n: int, spec: CopySpec, seed: int = 1) -> list[Pair]:
    return copy_pairs([Doc.from_text(text) for text in ARTICLES], n, spec, random.Random(seed))


def test_edits_and_clauses() -> None:
    rng = random.Random(0)
    sentence = "The library is open from 9am to 5pm, and the mayor agreed."
    assert edit("case", sentence, rng) in (sentence.lower(), sentence.upper())
    assert edit("punctuation", sentence, rng) == "The library is open from 9am to 5pm and the mayor agreed"
    dropped = edit("article", sentence, rng)
    assert dropped is not None and _words(dropped) == _words(sentence) and len(dropped) < len(sentence)
    assert edit("article", "Prices rose in 2019.", rng) is None
    assert clause(sentence) == "The library is open from 9am to 5pm."
    assert clause("It rose, and fell.") is None


def test_each_kind_says_what_its_label_says() -> None:
    pairs = _pairs(600, CopySpec(canonical_share=0.0))
    kinds = {p.kind for p in pairs}
    assert {"copy_verbatim", "copy_number_swap", "copy_negation", "copy_left_out"} <= kinds
    assert {p.label for p in pairs} == {ENTAILMENT, NEUTRAL, CONTRADICTION}
    for pair in pairs:
        sentences = [_words(s) for s in split_sentences(pair.premise)]
        hypothesis = _words(pair.hypothesis)
        copied = any(hypothesis == s[: len(hypothesis)] for s in sentences)
        if pair.label == ENTAILMENT:
            assert copied, pair  # a sentence of the window, or its first clause, up to case, punctuation, articles
        else:
            assert not copied, pair  # same surface, but one figure, name or negation changed, or not in the window
    alone = [p for p in pairs if p.premise == p.hypothesis]
    assert alone and all(p.label == ENTAILMENT for p in alone)  # the window that is the copied sentence itself
    assert all(p.label == CONTRADICTION for p in pairs if "swap" in p.kind or "negation" in p.kind)


def test_canonical_pairs_read_figures_as_the_verifier_does() -> None:
    pairs = _pairs(300, CopySpec(canonical_share=1.0))
    assert all(p.kind.endswith("+canonical") for p in pairs)
    for pair in pairs:
        assert canonical_text(pair.premise) == pair.premise and canonical_text(pair.hypothesis) == pair.hypothesis
    assert any("9:00 to 17:00" in p.premise for p in pairs)
    assert not any("9am" in p.premise for p in pairs)


def test_build_replays_the_prepared_mix(tmp_path: Path) -> None:
    data = tmp_path / "train"
    data.mkdir()
    with (data / "news.jsonl").open("w") as fh:
        for i, text in enumerate(ARTICLES):
            fh.write(json.dumps({"id": str(i), "premise": text, "hypothesis": "x", "label": "entailment"}) + "\n")
    replay = tmp_path / "replay"
    replay.mkdir()
    for name, n in (("train", 500), ("val", 50)):
        with (replay / f"{name}.jsonl").open("w") as fh:
            for i in range(n):
                fh.write(json.dumps(Pair(f"p {i}", f"h {i}", NEUTRAL, "rte", "real").row()) + "\n")
    spec = CopySpec(copies=100, val_copies=10, val_replay=20, replay_share=0.5, context_docs=(("news", 30),))
    first = build(data, replay, tmp_path / "a", spec=spec, seed=3)
    build(data, replay, tmp_path / "b", spec=spec, seed=3)
    assert (tmp_path / "a" / "train.jsonl").read_text() == (tmp_path / "b" / "train.jsonl").read_text()
    assert first["n_train"] == 200 and first["n_val"] == 30
    train = [json.loads(line) for line in (tmp_path / "a" / "train.jsonl").open()]
    assert sum(r["source"] == "copies" for r in train) == 100 and sum(r["source"] == "rte" for r in train) == 100
    val = [json.loads(line) for line in (tmp_path / "a" / "val.jsonl").open()]
    assert not {(r["premise"], r["hypothesis"]) for r in val} & {(r["premise"], r["hypothesis"]) for r in train
                                                                  if r["source"] == "copies"}
    assert json.loads((tmp_path / "a" / "mix.json").read_text())["spec"]["replay_share"] == 0.5
