"""The typed report: `Report.route` and `Report.meta` in Python and in JSON, and the deprecated `decision` and
`extra` that still read them for one release."""

from __future__ import annotations

import dataclasses
import json

import pytest

from groundwire import REFUSAL_TOKEN, Report, ReportMeta, Route, RoutedThresholds, Verdict, Verifier
from groundwire.foundation.types import (
    CascadeStage,
    Consistency,
    JudgeOutcome,
    JudgeSummary,
    LowConfidenceSpan,
    SelfRagSegment,
    SkippedSentence,
)
from groundwire.scoring import get_scorer

CONTEXT = ["The plan costs $10 a month and includes roaming in the EU."]
ANSWER = "Hello! The plan costs $10 a month. It started in 1999."
META_FIELDS = [f.name for f in dataclasses.fields(ReportMeta)]


def lexical() -> Verifier:
    return Verifier(get_scorer("lexical"))


def test_meta_types_what_the_verifier_records() -> None:
    report = lexical().verify(ANSWER, CONTEXT, task="qa")
    meta = report.meta
    assert meta.task == "qa" and meta.thresholds == RoutedThresholds(accept_at=0.8, reject_at=0.2)
    assert meta.skipped == (SkippedSentence("Hello!", "greeting_or_too_short"),)
    assert meta.windows == 1 and meta.pairs_scored == 2  # two claims, one window each
    assert (meta.cascade, meta.judge, meta.rendered_chunks, meta.profile) == (None, None, None, None)
    assert report.route is Route.REJECT and [c.route for c in report.claims] == [Route.ACCEPT, Route.REJECT]


def test_the_json_names_route_and_meta_with_every_field_null_where_it_does_not_apply() -> None:
    data = json.loads(json.dumps(lexical().verify(ANSWER, CONTEXT).to_dict()))
    assert data["route"] == "reject" and "decision" not in data and "extra" not in data
    assert list(data["meta"]) == META_FIELDS
    assert data["meta"]["task"] is None and data["meta"]["thresholds"] == {
        "accept_at": 0.8, "reject_at": 0.2, "decide_at": None}
    abstained = lexical().verify(REFUSAL_TOKEN, CONTEXT).to_dict()
    assert abstained["route"] == "accept" and set(abstained["meta"].values()) == {None}  # nothing was read


def test_every_meta_field_writes_as_json() -> None:
    stage = CascadeStage("first", 0.5, Route.ESCALATE, 0.01)
    meta = ReportMeta(
        task="qa", calibration="qa", thresholds=RoutedThresholds(0.8, 0.2, decide_at=0.5),
        skipped=(SkippedSentence("Hi!", "greeting_or_too_short"),), windows=3, pairs_scored=6,
        rendered_chunks={"S1": "Name: Pizza Mizza."},
        cascade=(stage, CascadeStage("second", 0.9, Route.ACCEPT, 0.02, calibrated_after="first")),
        judge=JudgeSummary(2, 1, (0,), (1,), 10, 5, 0.2, 3, (
            JudgeOutcome(0, verdict=Verdict.SUPPORTED, model_verdict=Verdict.SUPPORTED, quote="q", chunk_id="S1"),
            JudgeOutcome(1, error="timed out"))),
        consistency=Consistency(3, (1.0, 0.5), 0.75), low_confidence_spans=(LowConfidenceSpan(0, 5, 0.1, "Hello"),),
        self_rag=(SelfRagSegment("Hi.", (0, 3), None, "relevant", "fully", 5, (Verdict.SUPPORTED,)),),
        repaired_from="an answer", profile="legal",
    )
    report = Report("a", 1.0, Route.ACCEPT, (), False, "m", meta=meta)
    data = json.loads(json.dumps(report.to_dict()))["meta"]
    assert data["cascade"][1] == {"model_id": "second", "score": 0.9, "route": "accept", "seconds": 0.02,
                                  "calibrated_after": "first"}
    assert data["judge"]["outcomes"][0]["verdict"] == "SUPPORTED" and data["judge"]["not_judged"] == [1]
    assert data["self_rag"][0]["span"] == [0, 3] and data["self_rag"][0]["verifier"] == ["SUPPORTED"]
    assert data["thresholds"]["decide_at"] == 0.5 and data["profile"] == "legal"


def test_decision_and_extra_still_read_route_and_meta_with_a_warning() -> None:
    report = lexical().verify(ANSWER, CONTEXT, task="qa")
    with pytest.warns(DeprecationWarning, match="Report.route"):
        assert report.decision is report.route
    with pytest.warns(DeprecationWarning, match="Report.meta"):
        extra = report.extra
    # The former dict: a key only where it applies, three-way thresholds without decide_at.
    assert extra == {"task": "qa", "calibration": "qa", "thresholds": {"accept_at": 0.8, "reject_at": 0.2},
                     "skipped": [{"text": "Hello!", "reason": "greeting_or_too_short"}], "windows": 1, "pairs_scored": 2}
    staged = dataclasses.replace(report, meta=ReportMeta(cascade=(CascadeStage("first", 0.5, Route.ESCALATE, 0.01),)))
    with pytest.warns(DeprecationWarning):
        assert staged.extra == {"cascade": [{"model_id": "first", "score": 0.5, "decision": "escalate", "seconds": 0.01}]}
