"""Synthetic role-swap contradictions (train.perturb "role_swap"): the generator and the check agree."""

from __future__ import annotations

import random

import pytest

from groundwire.core.checks.roles import role_findings
from groundwire.foundation.types import Verdict
from groundwire.train import perturb
from groundwire.train.data import MixSpec, synthetic_pairs
from groundwire.train.perturb import CONTRADICTION, Doc

SENTENCES = [
    "The audit report was written by Alice Moreno and reviewed by Bob Chen.",
    "In 2018, Microsoft acquired GitHub for 7.5 billion dollars.",
    "The Celtics beat the Lakers 102-99 on Friday.",
    "The film was directed by Greta Gerwig and produced by David Heyman.",
    "In 2020, Oracle sued Google over the Java interface.",
]


@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize("seed", range(3))
def test_a_role_swap_keeps_the_words_and_contradicts_the_sentence(sentence: str, seed: int) -> None:
    swapped = perturb.apply("role_swap", sentence, Doc.from_text(sentence), random.Random(seed))
    assert swapped is not None and swapped != sentence
    assert sorted(swapped) == sorted(sentence)  # the same letters, moved
    findings = role_findings(swapped, sentence)
    assert findings and {f.verdict for f in findings} == {Verdict.CONTRADICTED}


@pytest.mark.parametrize(
    "sentence",
    ["The museum opened in 1990.", "It was not written by Alice Moreno.", "The report was written by Alice Moreno."],
)
def test_no_role_swap_where_no_two_names_hold_roles(sentence: str) -> None:
    assert perturb.apply("role_swap", sentence, Doc.from_text(sentence), random.Random(0)) is None


def test_a_mix_that_names_role_swaps_makes_contradiction_pairs_of_them() -> None:
    """The default mix (the v2 recipe) is left as it was; a mix for the next model adds the kind by name."""
    assert perturb.PERTURBATIONS["role_swap"].label == CONTRADICTION
    assert "role_swap" not in MixSpec().kinds
    docs = {"news": [Doc.from_text(f"{s} The deal was reported in the press.") for s in SENTENCES]}
    spec = MixSpec(per_doc=20, kinds={"role_swap": 1.0}, window_words=(5, 40))
    pairs = synthetic_pairs(docs, spec, random.Random(0))
    swaps = [p for p in pairs if p.kind == "role_swap"]
    assert swaps and all(p.label == CONTRADICTION and p.hypothesis not in p.premise for p in swaps)
