"""`serve --judge-labels` (issue 56 item 4): when the LLM judge settles an escalated answer, its verdict is kept as a
label of kind judge, counted apart from reviewers' verdicts; off, the judge teaches nothing. The judge is a SCRIPTED
OpenAI-compatible server on loopback (tests/llm/scripted_llm.py); the checks, the log and the labels are real."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMServer

CASTLE = [{"id": "S1", "text": "The castle faces the harbor."}]
NORTH = "The castle faces the north harbor."
"""The lexical scorer gives it 0.75 against CASTLE: escalated between its default thresholds, 0.2 and 0.8."""


def ruling(verdict: str) -> str:
    return json.dumps({"quote": "The castle faces the harbor.", "chunk_id": "S1", "verdict": verdict,
                       "reason": "scripted"})


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


def _client(settings: Any, llm: ScriptedLLMServer, **changes: Any) -> Any:
    from fastapi.testclient import TestClient

    from groundwire.config import Config, LLMConfig
    from groundwire.service import create_app

    config = Config(llm=LLMConfig(base_url=llm.url, model="scripted-judge", max_retries=0, timeout_s=30))
    return TestClient(create_app(replace(settings, use_llm=True, config=config, **changes)),
                      raise_server_exceptions=False)


def _verify(client: Any, answer: str, *, judge: bool = True) -> dict[str, Any]:
    response = client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": CASTLE, "judge": judge})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_settled_escalation_is_kept_as_a_judge_label_when_opted_in(settings, llm) -> None:
    from groundwire.data.store import Store

    with _client(settings, llm, judge_labels=True) as client:
        llm.script(ruling("SUPPORTED"))
        accepted = _verify(client, NORTH)
        llm.script(ruling("CONTRADICTED"))
        rejected = _verify(client, NORTH)
        llm.script("this is not JSON")  # an unreadable ruling settles nothing: the answer stays escalated
        unsettled = _verify(client, NORTH)
        unjudged = _verify(client, NORTH, judge=False)  # no judge asked
        plain = _verify(client, "The castle faces the harbor.")  # accepted outright: the judge is not asked
        assert (accepted["report"]["route"], rejected["report"]["route"]) == ("accept", "reject")
        assert unsettled["report"]["route"] == "escalate" and len(llm.requests) == 3

        store = Store(settings.db_url)
        try:
            labels = {record.id: label for record, label in store.judged(scope="alpha")}
            assert set(labels) == {accepted["request_id"], rejected["request_id"]}
            kept = labels[accepted["request_id"]]
            assert (kept.faithful, kept.judge, kept.unfaithful_claims) == (True, "scripted-judge", ())
            ruled_out = labels[rejected["request_id"]]
            assert not ruled_out.faithful and [c.index for c in ruled_out.unfaithful_claims] == [0]
            assert store.reviewed(scope="alpha") == []  # never a reviewer's verdict
        finally:
            store.close()
        assert {unjudged["request_id"], plain["request_id"], unsettled["request_id"]}.isdisjoint(labels)

        # Counted apart: the eval loop's labels section has no reviewed answer, and two judge labels.
        counts = client.get("/v1/eval", headers=ALPHA).json()["labels"]["counts"]
        assert counts["labelled"] == 0
        assert counts["judge"] == {"labelled": 2, "not_faithful": 1, "faithful": 1}
        # A reviewer's verdict on a judged answer is a human label; the judge's stays, apart.
        given = client.post("/v1/feedback", headers=ALPHA, json={"request_id": rejected["request_id"],
                                                                 "faithful": True})
        assert given.status_code == 200, given.text
        counts = client.get("/v1/eval", headers=ALPHA).json()["labels"]["counts"]
        assert (counts["labelled"], counts["faithful"], counts["judge"]["labelled"]) == (1, 1, 2)


def test_without_judge_labels_the_judge_s_verdict_is_not_kept(settings, llm) -> None:
    from groundwire.data.store import Store

    with _client(settings, llm) as client:
        llm.script(ruling("SUPPORTED"))
        assert _verify(client, NORTH)["report"]["route"] == "accept"
    store = Store(settings.db_url)
    try:
        assert store.judged(scope="alpha") == [] and store.judge_labels_version(scope="alpha") == (0, None)
    finally:
        store.close()


def test_judge_labels_count_toward_the_scope_s_next_refit_which_fits_on_both_kinds(settings, llm, tmp_path) -> None:
    """With --learn, a judge label is a verdict toward --learn-every, and the refit reads both kinds, counted apart
    in the profile's history (here refused: two labels are far too few, and the record says so). `--judge-error auto`
    crosses into the refit's own process and is measured there: no reviewer labelled these answers, so the judge is
    taken as right, and the history says why."""
    from groundwire.calibration import versions

    profiles = tmp_path / "profiles"
    (profiles / "alpha").mkdir(parents=True)
    with _client(settings, llm, judge_labels=True, judge_weight=0.5, judge_error="auto", profiles=str(profiles),
                 learn=True, learn_every=2) as client:
        llm.script(ruling("SUPPORTED"), ruling("CONTRADICTED"))
        _verify(client, NORTH)
        _verify(client, NORTH)
        learner = client.app.state.runtime.learner
        learner.wait()
        assert [learned.scope for learned in learner.done] == ["alpha"]
    entry = versions.history(profiles / "alpha")[-1]
    assert entry["event"] == "refused" and "too_few_labels" in entry["reason"]
    labels = entry["labels"]
    assert (labels["human"], labels["judge"], labels["judge_weight"], labels["judge_error"]) == (0, 2, 0.5, 0.0)
    assert labels["judge_error_from"]["overlap"] == 0 and "taken as right" in labels["judge_error_from"]["reason"]


def test_serve_takes_a_judge_error_rate_or_auto_and_refuses_anything_else(tmp_path, monkeypatch) -> None:
    import subprocess

    import uvicorn
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda service, **_: served.append(service))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GROUNDWIRE_CONFIG", "")
    for given, expected in ((None, 0.0), ("0.1", 0.1), ("auto", "auto")):
        flag = [] if given is None else ["--judge-error", given]
        result = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "x.db"), "--scorer", "lexical", *flag])
        assert result.exit_code == 0, result.output
        assert served[-1].state.settings.judge_error == expected
    refused = subprocess.run([sys.executable, "-m", "groundwire", "serve", "--db", str(tmp_path / "x.db"),
                              "--judge-error", "bogus"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "invalid_option" in refused.stderr, refused.stderr
    assert "--judge-error" in refused.stderr and "auto" in refused.stderr and "'bogus'" in refused.stderr


def test_the_profile_route_shows_how_the_judge_s_error_rate_was_obtained(tmp_path) -> None:
    from groundwire.service.routes.profiles import _labels_in_force

    measured = {"auto": True, "overlap": 40, "disagreements": 4, "interval": [0.04, 0.23], "reason": "measured"}
    (tmp_path / "profile.json").write_text(json.dumps({"labels_from": {
        "labels": "both", "label_kinds": {"human": 40, "judge": 60}, "judge_weight": 1.0, "judge_error": 0.1,
        "judge_error_from": measured}}))
    shown = _labels_in_force(tmp_path)
    assert shown is not None and shown["judge_error"] == 0.1 and shown["judge_error_from"] == measured
