"""One assembly path (issue 18 item 1): the library calls and the adapters build their verifier in pipeline,
one shared verifier per distinct CheckSettings."""

from __future__ import annotations

import asyncio

import pytest

import groundwire
from groundwire.adapters.common import AdapterCheck
from groundwire.config import CheckSettings
from groundwire.core.errors import InputError
from groundwire.pipeline import CheckItem, build_verifier, check, given_or_shared, shared_verifier
from groundwire.scoring.lexical import LexicalScorer

CONTEXT = ["The Pro plan costs 19 dollars a month. Refunds take 14 days."]
ANSWER = "The Pro plan costs 19 dollars a month. Refunds take 30 days."


def test_one_shared_verifier_per_distinct_settings() -> None:
    lexical = shared_verifier(CheckSettings(scorer="lexical"))
    assert shared_verifier(CheckSettings(scorer="lexical")) is lexical
    assert given_or_shared(None, "lexical") is lexical
    assert AdapterCheck(scorer="lexical").resolve() is lexical  # the adapters share it too
    stricter = shared_verifier(CheckSettings(scorer="lexical", accept_at=0.95))
    assert stricter is not lexical and stricter.accept_at == 0.95
    assert AdapterCheck(scorer="lexical", accept_at=0.95).resolve() is stricter
    figures = shared_verifier(CheckSettings(scorer="lexical", canonical_figures=True))
    assert figures is not lexical and figures.canonical_figures and not lexical.canonical_figures


def test_verify_is_the_pipeline_check_with_typed_settings() -> None:
    report = groundwire.verify(ANSWER, CONTEXT, scorer="lexical", accept_at=0.9, reject_at=0.1)
    verifier = build_verifier(CheckSettings(scorer="lexical", accept_at=0.9, reject_at=0.1))
    expected = check(verifier, CheckItem(ANSWER, [groundwire.Chunk("S1", CONTEXT[0])]))
    assert report.to_dict() | {"timings": None} == expected.to_dict() | {"timings": None}
    assert shared_verifier(CheckSettings(scorer="lexical", accept_at=0.9, reject_at=0.1)).accept_at == 0.9
    # A scorer object gets a verifier of its own with the same settings.
    own = groundwire.verify(ANSWER, CONTEXT, scorer=LexicalScorer(), accept_at=0.9, reject_at=0.1)
    assert own.score == report.score and own.decision == report.decision


def test_bad_settings_are_input_errors() -> None:
    with pytest.raises(ValueError, match="reject_at"):
        groundwire.verify(ANSWER, CONTEXT, scorer="lexical", accept_at=0.2, reject_at=0.5)
    with pytest.raises(InputError):
        groundwire.verify(ANSWER, CONTEXT, scorer="no-such-scorer")
    with pytest.raises(ValueError, match="either a verifier"):
        given_or_shared(shared_verifier(CheckSettings(scorer="lexical")), "lexical")


def test_averify_checks_through_the_same_path() -> None:
    report = asyncio.run(groundwire.averify(ANSWER, CONTEXT, scorer="lexical"))
    assert report.score == groundwire.verify(ANSWER, CONTEXT, scorer="lexical").score
