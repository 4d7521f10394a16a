"""The synthetic pair generator: each perturbation does what its label says, and the mix is reproducible."""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

from groundwire.train import perturb
from groundwire.train.data import MIXES, MixSpec, build
from groundwire.train.perturb import CONTRADICTION, ENTAILMENT, NEUTRAL, Doc

TEXT = ("In 2019, the Rotterdam museum sold 4,500 tickets in March. However, its director Anna Berg said "
        "the figure was lower than expected. She is planning a new exhibition with the Louvre, which opens in May. "
        "The museum was not open on Mondays.")


@pytest.fixture()
def doc() -> Doc:
    return Doc.from_text(TEXT)


def test_sentences_and_pools(doc: Doc) -> None:
    assert len(doc.sentences) == 4
    assert "4,500" in doc.numbers and "2019" in doc.numbers
    assert any("Louvre" in e for e in doc.entities)
    assert perturb.split_sentences("It began in 1846.First for Women is new.")[1].startswith("First")


@pytest.mark.parametrize("seed", range(5))
def test_perturbations_change_what_they_claim(doc: Doc, seed: int) -> None:
    rng = random.Random(seed)
    first, second, third, fourth = doc.sentences
    swapped = perturb.apply("number_swap", first, doc, rng)
    assert swapped and swapped != first and re.findall(r"\d[\d,]*", swapped) != re.findall(r"\d[\d,]*", first)
    assert "not" not in perturb.apply("negation", fourth, doc, rng)
    assert " not " in perturb.apply("negation", second, doc, rng)
    assert perturb.apply("pronoun_swap", third, doc, rng).startswith("He ")
    qualified = perturb.apply("qualifier", first, doc, rng)
    assert len(qualified) > len(first)
    dated = perturb.apply("date_swap", first, doc, rng)
    assert dated != first
    prefix = perturb.apply("clause_prefix", third, doc, rng)
    assert prefix == "She is planning a new exhibition with the Louvre."


def test_labels_of_registry() -> None:
    assert perturb.PERTURBATIONS["light_rewrite"].label == ENTAILMENT
    assert perturb.PERTURBATIONS["qualifier"].label == NEUTRAL
    assert {perturb.PERTURBATIONS[n].label for n in ("number_swap", "negation", "entity_swap")} == {CONTRADICTION}


def _fake_train_dir(root: Path) -> Path:
    rng = random.Random(1)
    root.mkdir()
    articles = [f"Town {i} opened a library in {1990 + i}. It has {100 + i} books and {i + 2} rooms. "
                f"Mayor Jane Doe{i} said the library is popular. The library is not open on Sundays. "
                f"Visitors came from Leeds and York in June." for i in range(30)]
    with (root / "news.jsonl").open("w") as fh:
        for i, text in enumerate(articles):
            fh.write(json.dumps({"id": str(i), "premise": text, "hypothesis": "x", "label": "entailment",
                                 "source": "news"}) + "\n")
    with (root / "qa.jsonl").open("w") as fh:
        for i in range(40):
            label = rng.choice(["entailment", "neutral"])
            fh.write(json.dumps({"id": f"q{i}", "premise": articles[i % 30], "hypothesis": "A short answer.",
                                 "label": label, "source": "qa"}) + "\n")
    return root


def test_build_is_reproducible_and_balanced(tmp_path: Path) -> None:
    data = _fake_train_dir(tmp_path / "train")
    spec = MixSpec(context_docs={"news": 30}, per_doc=4, real={"qa": 20}, length_balanced=("qa",), records=20)
    first = build(data, tmp_path / "a", seed=3, spec=spec)
    second = build(data, tmp_path / "b", seed=3, spec=spec)
    assert (tmp_path / "a" / "train.jsonl").read_text() == (tmp_path / "b" / "train.jsonl").read_text()
    assert first["labels"] == second["labels"]
    assert 40 <= first["sources"]["records"] <= 80  # about per_record pairs for each generated record
    assert set(first["labels"]) == {ENTAILMENT, NEUTRAL, CONTRADICTION}
    rows = [json.loads(line) for line in (tmp_path / "a" / "train.jsonl").open()]
    assert all(r["hypothesis"] != r["premise"] and r["premise"] for r in rows)
    # A contradiction never equals its source sentence verbatim inside the premise.
    assert all(r["hypothesis"] not in r["premise"] for r in rows if r["label"] == CONTRADICTION)


def test_role_events_add_role_pairs_and_leave_the_rest_of_a_seed_alone(tmp_path: Path) -> None:
    assert MIXES["v4"].role_events > 0 and MIXES["v3"].role_events == 0
    data = _fake_train_dir(tmp_path / "train")
    spec = MixSpec(context_docs={"news": 30}, per_doc=4, real={"qa": 20}, length_balanced=("qa",), records=20)
    without = build(data, tmp_path / "a", seed=3, spec=spec)
    with_roles = build(data, tmp_path / "b", seed=3, spec=replace(spec, role_events=30))
    assert with_roles["sources"]["roles"] == 90 and "roles" not in without["sources"]
    assert with_roles["sources"] == {**without["sources"], "roles": 90}


def test_noncommercial_data_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="noncommercial"):
        build(tmp_path / "train-noncommercial", tmp_path / "out")


def test_mix_v3_adds_the_human_pairs_and_keeps_v2() -> None:
    from groundwire.train.data import HUMAN_PAIRS_V3, MIXES

    assert MIXES["v2"] == MixSpec()
    assert MIXES["v3"].real == {**MixSpec().real, **HUMAN_PAIRS_V3}
    assert MIXES["v3"].context_docs == MixSpec().context_docs


def test_prepare_names_an_unknown_mix_and_missing_files(tmp_path: Path) -> None:
    import subprocess
    import sys

    def prepare(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "groundwire", "train", "prepare", "--data", str(data), *args],
                              capture_output=True, text=True)

    data = _fake_train_dir(tmp_path / "train")
    unknown = prepare("--mix", "v9")
    assert unknown.returncode == 2 and "v9" in unknown.stderr and "v3" in unknown.stderr
    missing = prepare("--mix", "v3", "--out", str(tmp_path / "out"))
    assert missing.returncode == 2 and "infotabs.jsonl" in missing.stderr
    assert not (tmp_path / "out").exists()
    for share in (["--soft-share", "0.5"], ["--soft-share", "1.5", "--soft", str(data / "qa.jsonl")]):
        refused = prepare(*share, "--out", str(tmp_path / "out"))
        assert refused.returncode == 2 and "--soft-share" in refused.stderr and not (tmp_path / "out").exists()


def test_a_soft_share_thins_the_hard_training_pairs_and_keeps_validation(tmp_path: Path) -> None:
    from groundwire.train.data import Pair

    data = _fake_train_dir(tmp_path / "train")
    spec = MixSpec(context_docs={"news": 30}, per_doc=4, real={"qa": 20}, length_balanced=("qa",), records=20)
    soft = [Pair(f"premise {i}", f"claim {i}", "neutral", "distill:t", "distill/x", probs=(0.2, 0.7, 0.1))
            for i in range(10)]
    plain = build(data, tmp_path / "plain", seed=3, spec=spec, soft=soft)
    half = build(data, tmp_path / "half", seed=3, spec=spec, soft=soft, soft_share=0.5)
    assert plain["n_train"] > 20 and half["n_train"] == 20 and half["n_soft"] == 10
    rows = [json.loads(line) for line in (tmp_path / "half" / "train.jsonl").open()]
    assert sum("probs" in r for r in rows) == 10 and half["sources"]["distill:t"] == 10
    # The hard pairs kept are a sample of the plain mix's; validation is the same file.
    plain_rows = set((tmp_path / "plain" / "train.jsonl").open())
    assert all(line in plain_rows for line in (tmp_path / "half" / "train.jsonl").open())
    assert (tmp_path / "half" / "val.jsonl").read_text() == (tmp_path / "plain" / "val.jsonl").read_text()
    with pytest.raises(ValueError, match="soft_share"):
        build(data, tmp_path / "none", seed=3, spec=spec, soft_share=0.5)


@pytest.mark.parametrize(
    ("sentence", "coarser"),
    [
        ("The conference opened on May 3, 2024 in Lisbon.", "The conference opened in May 2024 in Lisbon."),
        ("The deadline is 30 June 2025.", "The deadline is June 2025."),
        ("It reopened in September 2019 after repairs.", "It reopened in 2019 after repairs."),
    ],
)
def test_a_coarser_date_is_entailed(sentence: str, coarser: str) -> None:
    assert "date_generalize" in perturb.names(ENTAILMENT) and "hedge_dropped" in perturb.names(NEUTRAL)
    assert perturb.apply("date_generalize", sentence, Doc.from_text(sentence), random.Random(0)) == coarser
    assert perturb.apply("date_generalize", "It reopened last year.", Doc.from_text(TEXT), random.Random(0)) is None


def test_a_hedge_made_certain_makes_every_hedge_certain() -> None:
    sentence = "Early results suggest the drug may lower blood pressure in some patients."
    out = perturb.apply("hedge_dropped", sentence, Doc.from_text(sentence), random.Random(0))
    assert out == "Early results prove the drug will lower blood pressure in all patients."
    assert perturb.apply("hedge_dropped", "The drug lowers blood pressure.", Doc.from_text(TEXT), random.Random(0)) is None
