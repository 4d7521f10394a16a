"""The cascade at check time (issue 19): an answer the first stage escalates is checked again by the second, with
the same claims; an answer it decides never reaches the second stage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from groundwire.config import CheckSettings
from groundwire.foundation.types import Route
from groundwire.pipeline import build_verifier
from groundwire.scoring import get_scorer
from groundwire.scoring.base import PairScores

TOKENS = ("Access tokens expire after 3600 seconds by default.", "The default access token expires after 3600 seconds.")
"""The bundled model escalates this paraphrase (score about 0.77, under its accept threshold)."""
PRICE = ("The plan costs $10 a month.", "The plan costs $10 a month.")
"""A copy: the bundled model accepts it."""


class CountingScorer:
    """The lexical baseline, counting the pairs it is asked to score."""

    def __init__(self) -> None:
        self._inner = get_scorer("lexical")
        self.model_id = "counting-lexical"
        self.max_tokens = self._inner.max_tokens
        self.pairs = 0

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self._inner.count_tokens(texts)

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        self.pairs += len(pairs)
        return self._inner.score(pairs)


def test_an_escalated_answer_is_decided_by_the_second_stage_on_the_same_claims() -> None:
    first_alone = build_verifier(CheckSettings(scorer="bundled"))
    answer, context = TOKENS
    escalated = first_alone.verify(answer, [context])
    assert escalated.route is Route.ESCALATE

    cascade = build_verifier(CheckSettings(scorer="bundled", cascade="lexical"))
    report = cascade.verify(answer, [context])
    second_alone = build_verifier(CheckSettings(scorer="lexical")).verify(answer, [context])
    stages = report.meta.cascade
    assert stages is not None and [s.model_id for s in stages] == [escalated.model_id, second_alone.model_id]
    assert stages[0].route is Route.ESCALATE and stages[0].score == pytest.approx(escalated.score)
    # The answer's report is the second stage's, on the first stage's claims.
    assert (report.model_id, report.route, report.score) == (second_alone.model_id, second_alone.route,
                                                                 second_alone.score)
    assert [c.claim for c in report.claims] == [c.claim for c in escalated.claims]


def test_a_decided_answer_never_reaches_the_second_stage() -> None:
    first = build_verifier(CheckSettings(scorer="bundled"))
    counting = CountingScorer()
    first.escalate_to = build_verifier(CheckSettings(), scorer=counting)
    accepted = first.verify(*PRICE[:1], [PRICE[1]])
    assert accepted.route is Route.ACCEPT and accepted.meta.cascade is None and counting.pairs == 0
    escalated = first.verify(TOKENS[0], [TOKENS[1]])
    assert counting.pairs > 0 and escalated.meta.cascade is not None
    assert escalated.meta.cascade[1].model_id == "counting-lexical"


def test_check_reads_the_cascade_from_groundwire_toml(tmp_path: Path) -> None:
    (tmp_path / "groundwire.toml").write_text('[verify]\ncascade = "lexical"\n')
    (tmp_path / "c.txt").write_text(TOKENS[1])
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDWIRE_", "OPENAI_"))}
    done = subprocess.run([sys.executable, "-m", "groundwire", "check", "-a", TOKENS[0], "-c", "c.txt", "--json"],
                          cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert [s["route"] for s in report["meta"]["cascade"]][0] == "escalate"
    assert report["model_id"] == "lexical-baseline"


def test_an_unknown_second_stage_is_an_input_error() -> None:
    from groundwire.foundation.errors import InputError

    with pytest.raises(InputError, match="unknown scorer"):
        build_verifier(CheckSettings(cascade="no-such-scorer"))


def _second_stage(tmp_path: Path, after: str) -> Path:
    """The bundled model as a second-stage bundle, with a second-stage calibration after `after`."""
    from groundwire.scoring.onnx import bundled_path

    bundle = tmp_path / "second"
    bundle.mkdir()
    for item in bundled_path().iterdir():
        (bundle / item.name).symlink_to(item)
    (bundle / "config.json").unlink()
    config = json.loads((bundled_path() / "config.json").read_text())
    config["model_id"] = "second-stage"
    config["stage_two"] = {after: {"accept_at": 0.55, "reject_at": 0.05, "task_thresholds": {},
                                   "combiner": config.get("combiner"), "routing": {"stage": 2}}}
    (bundle / "config.json").write_text(json.dumps(config))
    return bundle


def test_the_second_stage_routes_with_its_calibration_after_the_first_stage(tmp_path: Path) -> None:
    first_id = get_scorer("bundled").model_id
    bundle = _second_stage(tmp_path, first_id)
    cascade = build_verifier(CheckSettings(scorer="bundled", cascade=f"onnx:{bundle}"))
    assert cascade.escalate_to is not None
    assert (cascade.escalate_to.accept_at, cascade.escalate_to.reject_at) == (0.55, 0.05)
    report = cascade.verify(TOKENS[0], [TOKENS[1]])
    assert report.meta.cascade is not None and report.meta.cascade[1].calibrated_after == first_id
    # Behind another first stage, the bundle's own stand-alone thresholds apply.
    alone = get_scorer(f"onnx:{bundle}")
    behind_lexical = build_verifier(CheckSettings(scorer="lexical", cascade=f"onnx:{bundle}"))
    assert behind_lexical.escalate_to is not None and behind_lexical.escalate_to.calibrated_after is None
    assert (behind_lexical.escalate_to.accept_at, behind_lexical.escalate_to.reject_at) == alone.thresholds
