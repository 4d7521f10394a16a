"""Synthetic role-swap contradictions (train.perturb "role_swap"): the generator and the check agree."""

from __future__ import annotations

import random

import pytest

from groundwire.core.roles import role_findings
from groundwire.core.types import Verdict
from groundwire.train import perturb
from groundwire.train.data import MixSpec
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


def test_role_swaps_are_contradictions_in_the_training_mix() -> None:
    assert perturb.PERTURBATIONS["role_swap"].label == CONTRADICTION
    assert MixSpec().kinds["role_swap"] > 0
