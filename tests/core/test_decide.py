"""Decided verdicts (issue 33, item 5): route = "decide" commits every answer and claim at one threshold, decide_at,
with no ESCALATE and no UNRESOLVED; the checks' caps still reject; the judge and a cascade are refused beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundwire.config import CheckSettings, load_config
from groundwire.core.verifier import Verifier
from groundwire.foundation.errors import InputError
from groundwire.foundation.types import Chunk, Report, Route, RoutedThresholds, Verdict
from groundwire.pipeline import CheckItem, Judge, build_verifier, check
from groundwire.scoring import get_scorer
from groundwire.scoring.base import Calibration
from groundwire.scoring.lexical import LexicalScorer
from groundwire.scoring.onnx import bundled_path

CONTEXT = ["The plan costs $10 a month and includes roaming in the EU.", "The castle faces the harbor."]
HALF = "The plan costs $10 a month and includes free international roaming for every customer."
"""Part of it is supported: the lexical baseline scores it mid-band, and three-way routing escalates it."""
ANSWERS = [
    "The plan costs $10.",
    HALF,
    "The castle faces the harbor [S4].",  # cites a passage nobody retrieved
    "The plan costs $25 a month.",  # a figure the context lacks
    "The castle does not face the harbor.",  # a negation flip
    "The plan costs " + "very " * 300 + "much money.",  # too long for the model window: not scored
    "Hello!",  # no checkable claim
]


def decide_at(report: Report) -> float | None:
    assert report.meta.thresholds is not None
    return report.meta.thresholds.decide_at


def test_decide_mode_escalates_nothing_and_leaves_nothing_unresolved() -> None:
    three_way = Verifier(get_scorer("lexical"))
    decided = Verifier(get_scorer("lexical"), CheckSettings(route="decide"))
    escalated = 0
    for answer in ANSWERS:
        before = three_way.verify(answer, CONTEXT)
        escalated += before.route is Route.ESCALATE
        report = decided.verify(answer, CONTEXT)
        assert report.route in (Route.ACCEPT, Route.REJECT), answer
        assert all(claim.route is not Route.ESCALATE for claim in report.claims), answer
        assert all(claim.verdict is not Verdict.UNRESOLVED for claim in report.claims), answer
        assert report.score == pytest.approx(before.score)  # the route changes; the score does not
        # Decided verdicts never accept what three-way routing rejects (decide_at lies above reject_at).
        assert report.route is not Route.ACCEPT or before.route is not Route.REJECT
    assert escalated >= 3  # the answers above do exercise the band


def test_the_caps_reject_in_decide_mode() -> None:
    decided = Verifier(get_scorer("lexical"), CheckSettings(route="decide", decide_at=0.21))  # just above the lexical reject_at, 0.2
    figure = decided.verify("The plan costs $25 a month.", CONTEXT)
    assert figure.route is Route.REJECT and figure.claims[0].route is Route.REJECT
    assert (figure.claims[0].verdict, figure.claims[0].decided_by) == (Verdict.CONTRADICTED, "checks")  # $10, not $25
    citation = decided.verify("The castle faces the harbor [S4].", CONTEXT)
    assert [f.check for f in citation.findings] == ["fabricated_citation"] and citation.route is Route.REJECT
    negated = decided.verify("The castle does not face the harbor.", CONTEXT)
    assert negated.claims[0].route is Route.REJECT and negated.route is Route.REJECT
    unscored = decided.verify(ANSWERS[5], CONTEXT)
    claim = unscored.claims[0]
    assert not claim.scored and "not scored" in (claim.note or "")
    assert (claim.route, claim.verdict, unscored.route) == (Route.REJECT, Verdict.NOT_FOUND, Route.REJECT)
    # A claimless answer is decided as three-way routes it: a refusal accepted, chit-chat not (issue 56).
    assert decided.verify("Hello!", CONTEXT).route is Route.REJECT
    assert decided.verify("The context does not mention the castle's age.", CONTEXT).route is Route.ACCEPT


def test_an_explicit_decide_at_is_honoured_on_both_sides() -> None:
    score = Verifier(get_scorer("lexical")).verify(HALF, CONTEXT).score
    above = Verifier(get_scorer("lexical"), CheckSettings(route="decide", decide_at=score - 0.01)).verify(HALF, CONTEXT)
    below = Verifier(get_scorer("lexical"), CheckSettings(route="decide", decide_at=score + 0.01)).verify(HALF, CONTEXT)
    assert (above.route, above.claims[0].verdict) == (Route.ACCEPT, Verdict.SUPPORTED)
    assert (below.route, below.claims[0].verdict) == (Route.REJECT, Verdict.NOT_FOUND)
    assert below.meta.thresholds == RoutedThresholds(0.8, 0.2, decide_at=score + 0.01)
    assert not any("decide_at" in warning for warning in above.warnings)
    # At the threshold exactly: accepted ("at or above").
    assert Verifier(get_scorer("lexical"), CheckSettings(route="decide", decide_at=score)).verify(HALF, CONTEXT).route is Route.ACCEPT


def test_without_a_decide_at_the_midpoint_is_used_and_the_report_says_so() -> None:
    verifier = Verifier(get_scorer("lexical"), CheckSettings(route="decide"))
    report = verifier.verify(HALF, CONTEXT)
    assert decide_at(report) == pytest.approx(0.5)
    assert any("midpoint of its accept_at and reject_at" in warning for warning in report.warnings)
    custom = Verifier(get_scorer("lexical"), CheckSettings(route="decide", accept_at=0.9, reject_at=0.5)).verify(HALF, CONTEXT)
    assert decide_at(custom) == pytest.approx(0.7)
    # Three-way reports carry neither.
    plain = Verifier(get_scorer("lexical")).verify(HALF, CONTEXT)
    assert decide_at(plain) is None and not any("decide" in w for w in plain.warnings)


class _DecideCalibrated(LexicalScorer):
    calibration = Calibration(decide_at=0.3, task_thresholds={"qa": (0.9, 0.1)})


def test_a_calibrated_decide_at_applies_and_an_explicit_one_wins() -> None:
    calibrated = Verifier(_DecideCalibrated(), CheckSettings(route="decide"))
    assert calibrated.router.decide_at == 0.3
    report = calibrated.verify(HALF, CONTEXT, task="qa")
    assert report.meta.thresholds == RoutedThresholds(0.9, 0.1, decide_at=0.3)
    assert report.warnings == ()
    assert Verifier(_DecideCalibrated(), CheckSettings(route="decide", decide_at=0.6)).router.decide_at == 0.6


def test_a_decide_at_at_or_below_reject_at_is_refused() -> None:
    with pytest.raises(ValueError, match="must be above reject_at"):
        Verifier(get_scorer("lexical"), CheckSettings(route="decide", decide_at=0.2))
    with pytest.raises(ValueError, match="must be above reject_at"):  # a task's reject_at counts too
        Verifier(_DecideCalibrated(), CheckSettings(route="decide", decide_at=0.05))
    with pytest.raises(InputError, match="must be above reject_at"):
        build_verifier(CheckSettings(scorer="lexical", route="decide", decide_at=0.1))
    with pytest.raises(ValueError, match="route"):
        Verifier(get_scorer("lexical"), CheckSettings(route="decided"))  # type: ignore[arg-type]
    # Three-way routing does not read decide_at, and does not refuse it.
    assert Verifier(get_scorer("lexical"), CheckSettings(decide_at=0.1)).router.mode == "three-way"


def test_the_judge_and_a_cascade_exclude_decide_mode() -> None:
    with pytest.raises(ValueError, match="exclude each other"):
        CheckSettings(route="decide", judge=True)
    with pytest.raises(ValueError, match="exclude each other"):
        CheckSettings(route="decide", cascade="lexical")
    with pytest.raises(InputError, match="exclude each other"):
        CheckSettings(judge=True).overridden(route="decide")
    with pytest.raises(ValueError, match="cascade"):
        Verifier(get_scorer("lexical"), CheckSettings(route="decide"), escalate_to=Verifier(get_scorer("lexical")))
    # A judge handed to a decided verifier (the service's judge=true on a decided service) is refused before any
    # LLM call: the client is never touched.
    decided = build_verifier(CheckSettings(scorer="lexical", route="decide"))
    with pytest.raises(InputError, match="exclude each other"):
        check(decided, CheckItem(HALF, [Chunk("S1", CONTEXT[0])]), judge=Judge(client=object()))  # type: ignore[arg-type]


def test_the_setting_is_read_from_groundwire_toml(tmp_path: Path) -> None:
    config_file = tmp_path / "groundwire.toml"
    config_file.write_text('[verify]\nscorer = "lexical"\nroute = "decide"\ndecide_at = 0.4\n', encoding="utf-8")
    settings = load_config(config_file, env={}).verify
    assert (settings.route, settings.decide_at) == ("decide", 0.4)
    verifier = build_verifier(settings)
    assert (verifier.router.mode, verifier.router.decide_at) == ("decide", 0.4)
    assert load_config(config_file, env={"GROUNDWIRE_VERIFY_ROUTE": "three-way"}).verify.route == "three-way"
    config_file.write_text('[verify]\nroute = "decide"\njudge = true\n', encoding="utf-8")
    with pytest.raises(InputError, match="exclude each other"):
        load_config(config_file, env={})
    config_file.write_text('[verify]\nroute = "sometimes"\n', encoding="utf-8")
    with pytest.raises(InputError, match="route"):
        load_config(config_file, env={})
    config_file.write_text("[verify]\ndecide_at = 1.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="decide_at"):
        load_config(config_file, env={})


@pytest.mark.skipif(not (bundled_path() / "config.json").is_file(), reason="no bundled model")
def test_a_bundle_config_decide_at_is_read_into_the_calibration(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for item in bundled_path().iterdir():
        if item.name != "config.json":
            (bundle / item.name).symlink_to(item)
    config = json.loads((bundled_path() / "config.json").read_text())
    (bundle / "config.json").write_text(json.dumps({**config, "decide_at": 0.35}))
    scorer = get_scorer(f"onnx:{bundle}")
    assert scorer.calibration.decide_at == 0.35  # type: ignore[attr-defined]
    verifier = Verifier(scorer, CheckSettings(route="decide"))
    assert verifier.router.decide_at == 0.35 and verifier.router.warnings == ()
    report = verifier.verify("The castle faces the harbor.", ["The castle faces the harbor."])
    assert decide_at(report) == 0.35 and report.route is Route.ACCEPT
    # The shipped bundle's config has none until the owner fits one: decide mode then warns and uses the midpoint.
    shipped = json.loads((bundled_path() / "config.json").read_text()).get("decide_at")
    assert get_scorer("bundled").calibration.decide_at == shipped  # type: ignore[attr-defined]
