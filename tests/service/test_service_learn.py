"""`serve --profiles DIR --learn`: a scope's profile refitted from its logged labels in the background after every N
verdicts, guarded, written as a version or refused with a record; one refitter per scope (service/learning.py)."""

from __future__ import annotations

import fcntl
import json
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from service_common import ALPHA, review_every_labelled_answer

pytest.importorskip("fastapi")



def test_the_nth_verdict_refits_the_scope_s_profile_in_the_background(settings, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from groundwire.calibration import versions
    from groundwire.service import create_app

    profiles = tmp_path / "profiles"
    profiles.mkdir()
    learning = replace(settings, profiles=str(profiles), learn=True, learn_every=80, refit_target_far=0.2, refit_target_frr=0.2)
    app = create_app(learning)
    with TestClient(app, raise_server_exceptions=False) as client:
        review_every_labelled_answer(client)  # 80 verdicts: one refit, on all of them
        learner = app.state.runtime.learner
        learner.wait()
        assert [learned.scope for learned in learner.done] == ["alpha"]
        entry = versions.history(profiles / "alpha")[-1]
        assert (entry["event"], entry["version"], entry["by"]) == ("installed", "v0001", "service refit"), entry
        assert entry["labels"]["human"] == 80 and entry["labels"]["judge"] == 0
        assert entry["figures"]["guard"]["held_answers"] == entry["labels"]["held_back"]
        document = json.loads((profiles / "alpha" / "profile.json").read_text())
        assert document["labels_from"]["scope"] == "alpha" and document["guard"]["replaced"] is True
        assert document == _guarded_refit_by_hand(learning, "alpha").document  # the one code path a bench calls

        # The next check of the scope is routed by the refitted profile, and names its version.
        checked = client.post("/v1/verify", headers=ALPHA, json={
            "answer": "Refunds are accepted within 30 days.",
            "chunks": [{"id": "S1", "text": "Refunds are accepted within 30 days of purchase."}]}).json()
        meta = checked["report"]["meta"]
        assert (meta["profile"], meta["profile_version"]) == ("alpha", "v0001")
        assert meta["thresholds"]["accept_at"] == document["calibration"]["thresholds"][0]

        # Its verdict is read as one on an answer v0001 routed (what the next refit's guard asks whether the profile
        # in force holds on: the answers it was not fitted on); the 80 before it were routed by no profile.
        given = client.post("/v1/feedback", headers=ALPHA, json={"request_id": checked["request_id"], "faithful": True})
        assert given.status_code == 200, given.text
        from groundwire.calibration.learn import logged_claim_rows
        from groundwire.data.store import Store

        store = Store(learning.db_url)
        try:
            routed_by = logged_claim_rows(store, scope="alpha", model_id=checked["report"]["model_id"]).routed_by
        finally:
            store.close()
        assert routed_by[checked["request_id"]] == "v0001"
        assert sum(version is None for version in routed_by.values()) == 80


def test_a_profile_of_another_model_is_refitted_at_start_or_refused_with_a_record(settings, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from groundwire.calibration import versions
    from groundwire.service import create_app

    stale = tmp_path / "profiles" / "alpha"
    stale.mkdir(parents=True)
    (stale / "profile.json").write_text(json.dumps({
        "format": 1, "base_model": "some-older-model",
        "calibration": {"thresholds": [0.55, 0.25], "task_thresholds": {}, "decide_at": None, "combiner": None}}))
    app = create_app(replace(settings, profiles=str(tmp_path / "profiles"), learn=True))
    with TestClient(app, raise_server_exceptions=False) as client:  # starts: without --learn it would not
        app.state.runtime.learner.wait()
        meta = client.post("/v1/verify", headers=ALPHA, json={
            "answer": "Refunds are accepted within 30 days.",
            "chunks": [{"id": "S1", "text": "Refunds are accepted within 30 days of purchase."}]}).json()["report"]["meta"]
        assert meta["profile"] is None and meta["thresholds"]["accept_at"] == 0.8  # the service's own routing
        entry = versions.history(stale)[-1]
        assert entry["event"] == "refused" and "no_rows" in entry["reason"]  # no labels logged yet
        state = client.get("/v1/profile", headers=ALPHA).json()  # the refusal is shown where the scope's profile is
        assert state["version"] is None and state["history"][-1]["event"] == "refused"  # a folder before versions


def _guarded_refit_by_hand(settings, scope: str):
    """calibration.guard.guarded_refit on the scope's labels checked again on a fresh model, called directly (as
    bench/learning_loop.py would on its own rows); and the claim rows the refit reads from the log without a check,
    the same rows."""
    from groundwire.calibration import combine, guard
    from groundwire.calibration.adapt import Targets, base_settings, shipped
    from groundwire.calibration.learn import logged_claim_rows
    from groundwire.data.labelled import read_reviewed
    from groundwire.data.rows import EvalRow
    from groundwire.data.store import Store
    from groundwire.pipeline import build_verifier
    from groundwire.scoring.base import calibration_of

    base = build_verifier(base_settings(settings.check))
    store = Store(settings.db_url)
    try:
        rows = [row for row in read_reviewed(store, scope=scope) if isinstance(row, EvalRow)]
        logged, unchecked, _, _, _ = logged_claim_rows(store, scope=scope, model_id=base.scorer.model_id)
    finally:
        store.close()
    claim_rows = combine.collect_rows(rows, base, file="request_log")
    assert unchecked == [] and logged == claim_rows  # read from the logged reports, not checked again
    routing = shipped(calibration_of(base.scorer))
    refit = guard.guarded_refit(claim_rows, routing, routing, targets=Targets(far=0.2, frr=0.2),
                                base_model=base.scorer.model_id, calibration=calibration_of(base.scorer), scope=scope)
    assert refit.adapted is not None
    return refit.adapted


class _Refits:
    """A stand-in refit that blocks until released, counting its runs."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.runs = 0

    def __call__(self, scope: str, folder: Path):
        from groundwire.calibration.learn import Learned

        self.runs += 1
        self.started.set()
        self.release.wait(10)
        return Learned(scope, None, "stand-in")


def test_one_refitter_per_scope_in_this_process_and_across_processes(tmp_path: Path) -> None:
    from groundwire.service.learning import LOCK_FILE, Learner

    refits = _Refits()
    learner = Learner(2, lambda scope: tmp_path / scope, refits)
    learner.verdict_added("alpha")
    assert refits.runs == 0  # the first verdict only counts
    learner.verdict_added("alpha")
    assert refits.started.wait(10)
    for _ in range(4):  # two more triggers while it runs: folded into one more run after it
        learner.verdict_added("alpha")
    refits.release.set()
    learner.wait(10)
    learner.wait(10)
    assert refits.runs == 2

    # Another replica holds the scope's lock: this one skips its refit.
    other = _Refits()
    busy = Learner(1, lambda scope: tmp_path / scope, other)
    with open(tmp_path / "alpha" / LOCK_FILE, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        busy.verdict_added("alpha")
        busy.wait(10)
    assert other.runs == 0
