"""Canonical figures in the model's input (core.figures): one spelling per value, in premise and claim alike."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import groundwire
from groundwire.config import CheckSettings
from groundwire.core.figures import canonical_text, extract_figures
from groundwire.core.units import canonical_unit
from groundwire.core.verifier import Verifier
from groundwire.pipeline import build_verifier
from groundwire.scoring import get_scorer
from groundwire.scoring.base import PairScores
from groundwire.scoring.onnx import OnnxScorer, bundled_path

SAME = [
    ("The limit is 3,600 requests per hour.", "The limit is 3600 requests per hour."),
    ("It costs 49 dollars.", "It costs $49."),
    ("It costs USD 49.", "It costs $49."),
    ("Five engineers joined.", "5 engineers joined."),
    ("Twenty-five people came.", "25 people came."),
    ("Revenue was $5,000,000.", "Revenue was $5 million."),
    ("Revenue was 5m.", "Revenue was 5 million."),
    ("Half, 50 percent, agreed.", "Half, 50%, agreed."),
    ("It opened on 2024-03-05.", "It opened on March 5, 2024."),
    ("It opened on 5th March 2024.", "It opened on March 5th, 2024."),
    ("Doors open at 5 PM.", "Doors open at 17:00."),
    ("A 5 kilometre run.", "A 5 km run."),
    ("A 5 kilometers run.", "A 5 km run."),
    ("It costs 3.50 euros.", "It costs €3.50."),
]


@pytest.mark.parametrize(("one", "other"), SAME)
def test_two_spellings_of_a_figure_read_the_same(one: str, other: str) -> None:
    assert canonical_text(one) == canonical_text(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("The limit is 3,600 requests.", "The limit is 3,500 requests."),
        ("It costs $49.", "It costs €49."),
        ("It opened on 2024-03-05.", "It opened on March 6, 2024."),
        ("Doors open at 5 PM.", "Doors open at 5 AM."),
        ("A 5 km run.", "A 5 mi run."),
    ],
)
def test_different_figures_stay_different(one: str, other: str) -> None:
    assert canonical_text(one) != canonical_text(other)


@pytest.mark.parametrize(
    "text",
    ["One of the best teams.", "Version 3.2.1 is out.", "COVID-19 spread.", "No figures here at all.", "50 cents"],
)
def test_what_is_no_figure_to_rewrite_is_left_alone(text: str) -> None:
    assert canonical_text(text) == text


@given(st.text(max_size=80))
def test_canonical_text_is_idempotent(text: str) -> None:
    once = canonical_text(text)
    assert canonical_text(once) == once


@given(st.integers(min_value=1000, max_value=10**12))
def test_a_separated_and_a_plain_number_agree(value: int) -> None:
    assert canonical_text(f"about {value:,} units") == canonical_text(f"about {value} units")


def test_the_figure_check_compares_units_in_one_spelling() -> None:
    assert canonical_unit("Kilometres") == canonical_unit("km") == "km"
    assert [f.unit for f in extract_figures("5 kilometres and 7 km")] == ["km", "km"]


class _Recording:
    """A scorer that records the pairs it is asked to score."""

    model_id = "recording"
    max_tokens = None
    calibration = None

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]

    def score(self, pairs: list[tuple[str, str]]) -> PairScores:
        import numpy as np

        self.pairs.extend(pairs)
        return PairScores(support=np.ones(len(pairs), dtype=np.float32))


@pytest.mark.parametrize("canonical", [False, True])
def test_the_scorer_sees_canonical_figures_only_when_asked(canonical: bool) -> None:
    scorer = _Recording()
    verifier = Verifier(scorer, CheckSettings(canonical_figures=canonical))  # type: ignore[arg-type]
    report = verifier.verify("Each key gets 3600 requests.", ["The limit is 3,600 requests for each key."])
    premise, claim = scorer.pairs[0]
    assert ("3,600" not in premise) is canonical
    assert claim == "Each key gets 3600 requests."
    # The report still quotes the context as written.
    assert report.claims[0].evidence is not None and "3,600" in report.claims[0].evidence


def test_the_setting_reaches_the_verifier() -> None:
    # On by default (calibration v6 was fitted reading figures this way), everywhere a check is built.
    assert build_verifier(CheckSettings(scorer="lexical")).canonical_figures
    assert not build_verifier(CheckSettings(scorer="lexical", canonical_figures=False)).canonical_figures
    assert Verifier(get_scorer("lexical")).canonical_figures
    assert "canonical_figures" in groundwire.pipeline.CHECK_OPTION_NAMES  # verify()'s keyword: None leaves the settings' own
    assert CheckSettings().canonical_figures


@pytest.mark.parametrize("canonical", [False, True])
def test_the_lexical_features_compare_what_the_model_compares(canonical: bool) -> None:
    """With canonical figures the words "12 kilometres" and "12 km" are the same to the overlap features too, or
    the combiner would pull down a claim the model reads as copied."""
    verifier = Verifier(_Recording(), CheckSettings(canonical_figures=canonical))  # type: ignore[arg-type]
    claim = verifier.verify("The trail is 12 km long.", ["The trail is 12 kilometres long."]).claims[0]
    assert claim.features is not None
    assert (claim.features["novel_word_share"] == 0.0) is canonical
    assert (claim.features["best_window_recall"] == 1.0) is canonical
    assert (claim.features["lexical_support"] == 1.0) is canonical


@pytest.mark.skipif(not (bundled_path() / "config.json").is_file(), reason="no bundled model")
def test_reading_figures_otherwise_than_the_calibration_warns_on_every_report() -> None:
    """The bundle records how its calibration read figures; a check that reads them otherwise says so."""
    assert OnnxScorer.bundled().calibration.canonical_figures is True
    context = ["The limit is 3,600 requests per hour."]
    calibrated = Verifier(get_scorer(), CheckSettings(canonical_figures=True)).verify("The limit is 3600 requests per hour.", context)
    assert not any("canonical_figures" in w for w in calibrated.warnings)
    other = Verifier(get_scorer(), CheckSettings(canonical_figures=False)).verify("The limit is 3600 requests per hour.", context)
    assert [w for w in other.warnings if "canonical_figures = true" in w and "recalibrate" in w]
    # An uncalibrated scorer, or a combiner the caller brings, has nothing recorded to disagree with.
    assert Verifier(get_scorer("lexical"), CheckSettings(canonical_figures=False)).calibration_warning is None
