"""Issue 38: routes bounded in work, not only in concurrency.

The eval loop's routes look the claims of failed requests up in the scope's documents: a call embeds them
(eval_max_corpus_chars), and checks each claim against the nearest ones (each check within max_pairs, all of them
within eval_max_pairs). A failure not looked up counts as undetermined, and the response says how many and why
(meta.evidence); nothing is left out silently. /v1/repair checks each part of a claim it splits against the whole
context: those checks together are held to 2 x max_pairs pairs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

# One passage a document (each one window, so an evidence check against the 3 nearest scores 3 pairs).
DOCUMENTS = [
    {"doc_id": "pump", "text": "The pump runs at 40 litres per minute."},
    {"doc_id": "spare", "text": "The spare pump runs at 90 litres per minute."},
    {"doc_id": "fan", "text": "The fan turns at 1200 revolutions per minute."},
    {"doc_id": "valve", "text": "The valve opens at 3 bar of pressure."},
]
CORPUS_CHARS = sum(len(d["text"]) for d in DOCUMENTS)
WRONG = ["The pump runs at 90 litres per minute.", "The pump runs at 75 litres per minute."]
"""Answers the `pump` document does not support: failures whose evidence is looked up in the other three."""


@contextmanager
def logged_failures(settings: Any, failures: int, **changes: Any) -> Iterator[Any]:
    """A service whose log holds `failures` failed verifies (against `pump`), and the four documents."""
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(replace(settings, **changes)), raise_server_exceptions=False) as client:
        assert client.post("/v1/ingest", headers=ALPHA, json={"documents": DOCUMENTS}).status_code == 200
        for answer in WRONG[:failures]:
            checked = client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "doc_ids": ["pump"]})
            assert checked.status_code == 200 and checked.json()["report"]["route"] != "accept", checked.text
        yield client


def _evidence_checks(client: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The claims the verifier runs from now on (the eval loop's evidence checks), in order."""
    verifier = client.app.state.runtime.verifier
    calls: list[str] = []
    real = verifier.run
    monkeypatch.setattr(verifier, "run", lambda plan, *a, **k: calls.append(plan.answer) or real(plan, *a, **k))
    return calls


def _failures(summary: dict[str, Any]) -> tuple[int, int]:
    """(failures looked up: a retrieval miss or generator drift, failures undetermined)."""
    metrics = summary["metrics"]
    return metrics["failures_retrieval_miss"] + metrics["failures_generator_drift"], metrics["failures_undetermined"]


def test_within_the_limits_every_failure_is_looked_up_and_the_work_is_reported(settings, monkeypatch) -> None:
    with logged_failures(settings, 2) as client:
        calls = _evidence_checks(client, monkeypatch)
        summary = client.get("/v1/eval", headers=ALPHA).json()
    assert sorted(calls) == sorted(WRONG)
    assert _failures(summary) == (2, 0)
    evidence = summary["meta"]["evidence"]
    assert evidence["failures_not_checked"] == 0 and evidence["reason"] is None
    assert evidence["pairs"] == 6  # two claims, each against the three nearest passages outside `pump`
    assert (evidence["max_pairs"], evidence["max_pairs_per_check"], evidence["max_corpus_chars"]) == (
        settings.eval_max_pairs, settings.max_pairs, settings.eval_max_corpus_chars)


def test_a_corpus_over_the_limit_is_not_embedded_and_the_response_says_why(settings, monkeypatch) -> None:
    from groundwire.evaluation.evalloop import evidence

    embedded: list[int] = []
    real_index = evidence.index_texts
    monkeypatch.setattr(evidence, "index_texts", lambda e, texts, **k: embedded.append(len(texts)) or real_index(
        e, texts, **k))
    with logged_failures(settings, 2, eval_max_corpus_chars=CORPUS_CHARS - 1) as client:
        calls = _evidence_checks(client, monkeypatch)
        summary = client.get("/v1/eval", headers=ALPHA).json()
        page = client.get("/v1/eval/report", headers=ALPHA).text
    assert (calls, embedded) == ([], [])  # nothing embedded, nothing re-checked
    assert _failures(summary) == (0, 2)
    evidence = summary["meta"]["evidence"]
    assert evidence["failures_not_checked"] == 2 and evidence["pairs"] == 0
    assert f"holds {CORPUS_CHARS} characters, over the limit of {CORPUS_CHARS - 1} (eval_max_corpus_chars)" in (
        evidence["reason"])
    assert "Not every failure was checked" in page and "eval_max_corpus_chars" in page
    # At the limit exactly, the corpus is embedded and the failures are looked up.
    fresh = settings.db_url.replace(".db", "-at-the-limit.db")
    with logged_failures(settings, 2, eval_max_corpus_chars=CORPUS_CHARS, db_url=fresh) as client:
        assert _failures(client.get("/v1/eval", headers=ALPHA).json()) == (2, 0)
    assert embedded == [len(DOCUMENTS)]


def test_an_evidence_check_over_max_pairs_is_not_run(settings, monkeypatch) -> None:
    # Each logged verify scores 1 pair (one claim, one window): within max_pairs=2. Its evidence check, against the
    # three nearest passages, would score 3: over it, so it is not run.
    with logged_failures(settings, 1, max_pairs=2) as client:
        calls = _evidence_checks(client, monkeypatch)
        summary = client.get("/v1/eval", headers=ALPHA).json()
    assert calls == []
    assert _failures(summary) == (0, 1)
    evidence = summary["meta"]["evidence"]
    assert evidence["failures_not_checked"] == 1
    assert "1 because an evidence check of theirs was over 2 (claim, window) pairs (max_pairs)" in evidence["reason"]


def test_one_call_scores_at_most_eval_max_pairs_and_counts_the_failures_past_it(settings, monkeypatch) -> None:
    with logged_failures(settings, 2, eval_max_pairs=3) as client:  # room for one evidence check of 3 pairs
        calls = _evidence_checks(client, monkeypatch)
        summary = client.get("/v1/eval", headers=ALPHA).json()
        recorded = client.post("/v1/eval/runs", headers=ALPHA).json()
    assert len(calls) == 2 and calls[0] == calls[1]  # the same one checked by each call; the other by neither
    assert _failures(summary) == (1, 1)
    evidence = summary["meta"]["evidence"]
    assert (evidence["pairs"], evidence["failures_not_checked"]) == (3, 1)
    assert "did not fit in what was left of the 3 pairs one call may score (eval_max_pairs)" in evidence["reason"]
    assert recorded["meta"]["evidence"] == evidence


def test_the_eval_limits_are_settings_with_flags(settings) -> None:
    from typer.testing import CliRunner

    from groundwire.cli import app
    from groundwire.foundation.errors import InputError

    with pytest.raises(InputError, match="eval_max_pairs and eval_max_corpus_chars"):
        replace(settings, eval_max_corpus_chars=-1)
    usage = CliRunner().invoke(app, ["serve", "--help"], terminal_width=200).output
    assert "--eval-max-pairs" in usage and "--eval-max-corpus-chars" in usage


# --- /v1/repair -----------------------------------------------------------------------------------------------

FIVE_CHUNKS = [{"id": f"S{i}", "text": f"The fan {i} turns at {i}00 revolutions per minute."} for i in range(1, 6)]
"""Five chunks of one window each: a claim checked against them scores 5 pairs."""


def _coordinated(parts: int) -> str:
    """One claim that repair splits into `parts` claims, none of them supported by FIVE_CHUNKS."""
    return "The pump runs at 3 bar and " + " and ".join(f"costs {i} dollars" for i in range(parts - 1)) + "."


def test_repair_s_own_checks_are_held_to_twice_max_pairs(settings, monkeypatch) -> None:
    from groundwire.llm.repair import conjuncts

    assert len(conjuncts(_coordinated(12))) == 12
    body = {"answer": _coordinated(12), "chunks": FIVE_CHUNKS}
    with logged_failures(settings, 0, max_pairs=10) as client:  # the answer's own check: 1 claim x 5 windows
        calls = _evidence_checks(client, monkeypatch)
        assert client.post("/v1/verify", headers=ALPHA, json=body).status_code == 200
        del calls[:]
        refused = client.post("/v1/repair", headers=ALPHA, json=body)
        # Its check, then 4 of the 12 parts (5 pairs each: 20 = 2 x max_pairs); the 5th is refused before it runs.
        assert refused.status_code == 413, refused.text
        assert len(calls) == 1 + 4 and calls[1:] == conjuncts(_coordinated(12))[:4]
        error = refused.json()["error"]
        assert error["code"] == "too_much_work"
        assert error["details"] == {"limit": "2 x max_pairs = 20", "max": 20, "got": 25}
        assert "Repairing this answer" in error["message"]
        # An answer whose parts fit is repaired as before: its check, and each of its 4 parts.
        del calls[:]
        fits = client.post("/v1/repair", headers=ALPHA, json={"answer": _coordinated(4), "chunks": FIVE_CHUNKS})
        assert fits.status_code == 200, fits.text
        assert len(calls) == 1 + 4



def test_the_eval_loop_looks_evidence_up_with_the_routing_in_force_for_the_scope(settings, tmp_path) -> None:
    """A failed claim found elsewhere in the corpus is a retrieval miss only where the scope's own routing calls it
    SUPPORTED there. The lexical scorer gives the claim 0.67 against the `noise` passage: below the service's
    accept_at (0.8), so generator drift; above the scope's profile's (0.5), so a retrieval miss."""
    import json

    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    documents = [{"doc_id": "pump", "text": "The pump runs at 40 litres per minute."},
                 {"doc_id": "noise", "text": "The pump is quiet and makes little noise when it runs at night."}]
    answer = "The pump is quiet in the evening."

    def partition(**changes: Any) -> tuple[int, int]:
        with TestClient(create_app(replace(settings, **changes)), raise_server_exceptions=False) as client:
            assert client.post("/v1/ingest", headers=ALPHA, json={"documents": documents}).status_code == 200
            checked = client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "doc_ids": ["pump"]})
            assert checked.status_code == 200 and checked.json()["report"]["route"] != "accept", checked.text
            metrics = client.get("/v1/eval", headers=ALPHA).json()["metrics"]
        return metrics["failures_retrieval_miss"], metrics["failures_generator_drift"]

    assert partition() == (0, 1)
    profile = tmp_path / "profiles" / "alpha"
    profile.mkdir(parents=True)
    (profile / "profile.json").write_text(json.dumps({
        "format": 1, "base_model": "lexical-baseline",
        "calibration": {"thresholds": [0.5, 0.1], "task_thresholds": {}, "decide_at": None, "combiner": None}}))
    assert partition(profiles=str(tmp_path / "profiles"), db_url=settings.db_url.replace(".db", "-2.db")) == (1, 0)
