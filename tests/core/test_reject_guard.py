"""The reject guard (calibration v8, issue 56 item 1): on the calibration keys a scorer's calibration names in
`reject_needs_finding` ("data2text": contexts of records), an answer is rejected only where a deciding check's finding
stands against one of its claims; the scorer's low score alone escalates it. verify() and the calibration replay
(calibration.lodo, what bench/lodo.py measures) route by the one rule, core.routing.Router."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from groundwire.calibration import adapt, combine, lodo
from groundwire.config import CheckSettings
from groundwire.core.routing import Router
from groundwire.data.rows import EvalRow, parse_record
from groundwire.foundation.types import Route, Verdict
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import Calibration
from groundwire.scoring.lexical import LexicalScorer

THRESHOLDS = (0.8, 0.3)
RECORD = json.dumps({"name": "Tinker's Burgers", "city": "Summerland", "hours": {"Monday": "11:0-17:0"},
                     "attributes": {"OutdoorSeating": False, "WiFi": "no"}, "business_stars": 4.0})
NO_FINDING = "Diners praise the friendly staff and the juicy patties."
"""Scores 0 on the lexical scorer, and no check finds anything against it: only the score would reject it."""
ATTRIBUTE = "Tinker's Burgers offers outdoor seating."  # the record says OutdoorSeating: false
FIGURE = "Tinker's Burgers has a rating of 4.5 stars."  # the record says 4.0


@dataclass
class GuardedLexical(LexicalScorer):
    """The lexical scorer with a calibration that names the guard's key, as the bundled model's config.json does."""

    @property
    def calibration(self) -> Calibration:
        return Calibration(thresholds=THRESHOLDS, reject_needs_finding=frozenset({"data2text"}))


def test_the_router_escalates_an_unfounded_reject_on_its_keys_only() -> None:
    router = Router(reject_needs_finding=frozenset({"data2text"}))
    assert router.asks_finding("data2text") and router.asks_finding("data2text/long")  # a sub-key follows its key
    assert not router.asks_finding("qa") and not router.asks_finding(None)
    assert router.unfounded("data2text", found=False) and not router.unfounded("data2text", found=True)
    assert not router.unfounded("summary", found=False)
    assert router.route(0.1, THRESHOLDS, unfounded=True) is Route.ESCALATE
    assert router.route(0.1, THRESHOLDS) is Route.REJECT
    assert router.route(0.9, THRESHOLDS, unfounded=True) is Route.ACCEPT  # the guard moves REJECT only
    # Decided verdicts escalate nothing: with no one to look, an unfounded low score is still rejected.
    assert Router("decide", 0.5).route(0.1, THRESHOLDS, unfounded=True) is Route.REJECT


@pytest.mark.parametrize("task", ["data2text", None])  # None: a JSON record in the context is taken as data2text
def test_on_records_the_score_alone_escalates_and_a_finding_rejects(task: str | None) -> None:
    verifier = build_verifier(CheckSettings(), scorer=GuardedLexical())
    alone = verifier.verify(NO_FINDING, [RECORD], task=task)
    assert alone.score <= THRESHOLDS[1]
    assert (alone.route, alone.claims[0].route, alone.claims[0].verdict) == (
        Route.ESCALATE, Route.ESCALATE, Verdict.UNRESOLVED)
    for answer, check in ((ATTRIBUTE, "attribute_conflict"), (FIGURE, "figure_not_in_context")):
        report = verifier.verify(answer, [RECORD], task=task)
        assert report.route is Route.REJECT and report.claims[0].route is Route.REJECT, answer
        assert check in [finding.check for finding in report.claims[0].checks]
    # An answer with a founded claim beside an unfounded one is rejected.
    assert verifier.verify(f"{NO_FINDING} {ATTRIBUTE}", [RECORD], task=task).route is Route.REJECT


def test_other_keys_and_scorers_without_the_guard_reject_on_the_score() -> None:
    guarded = build_verifier(CheckSettings(), scorer=GuardedLexical())
    report = guarded.verify(NO_FINDING, [RECORD], task="qa")  # a key the calibration does not name
    assert (report.route, report.claims[0].verdict) == (Route.REJECT, Verdict.NOT_FOUND)
    plain = build_verifier(CheckSettings(reject_at=THRESHOLDS[1]), scorer=LexicalScorer())
    assert plain.verify(NO_FINDING, [RECORD], task="data2text").route is Route.REJECT


def _row(task: str, i: int, answer: str) -> EvalRow:
    return parse_record({"id": f"{task}-{i}", "task": task, "question": None, "context": [RECORD], "answer": answer,
                         "hallucinated": False, "spans": [], "source": "test"})


def test_the_replay_routes_as_verify_does() -> None:
    scorer = GuardedLexical()
    verifier = build_verifier(CheckSettings(), scorer=scorer)
    answers = [NO_FINDING, ATTRIBUTE, FIGURE, f"{NO_FINDING} {ATTRIBUTE}", "Tinker's Burgers is in Summerland."]
    labelled = [_row(task, i, answer) for task in ("data2text", "qa") for i, answer in enumerate(answers)]
    fitted = adapt.shipped(scorer.calibration)  # the scorer's own calibration, the guard included
    assert fitted.reject_needs_finding == frozenset({"data2text"})
    replayed = lodo.route_by_key(fitted, combine.collect_rows(labelled, verifier, file="test"))
    routes = [replayed[("test", row.id)].route for row in labelled]
    assert routes == [verifier.verify(row.answer, [RECORD], task=row.task).route for row in labelled]
    assert routes[0] is Route.ESCALATE and routes[len(answers)] is Route.REJECT  # the guard, on data2text only


def test_the_bundled_model_guards_records() -> None:
    from groundwire.scoring.onnx import OnnxScorer, bundled_path

    if not (bundled_path() / "config.json").is_file():
        pytest.skip("no bundled model")
    calibration = OnnxScorer.bundled().calibration  # config.json's `reject_needs_finding`, read by the scorer
    assert Router(reject_needs_finding=calibration.reject_needs_finding).asks_finding("data2text/long")
    assert adapt.shipped(calibration).reject_needs_finding == calibration.reject_needs_finding
