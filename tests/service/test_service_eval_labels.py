"""/v1/eval's labels section: the scope's reviewers' labels and what `groundwire adapt --from-log` would fit on them,
made by adapt's own fit: the same profile as adapt on the service's log, beside the scope's routing in force."""

from __future__ import annotations

import pytest
from service_common import ALPHA, review_every_labelled_answer

pytest.importorskip("fastapi")



def test_the_dashboard_reports_the_profile_adapt_fits_on_the_service_log(client, settings) -> None:
    from groundwire.calibration.adapt import adapt, base_settings, log_source
    from groundwire.data.labelled import read_reviewed
    from groundwire.data.rows import EvalRow
    from groundwire.data.store import Store
    from groundwire.pipeline import build_verifier

    review_every_labelled_answer(client)

    labels = client.get("/v1/eval", headers=ALPHA).json()["labels"]
    assert labels["scope"] == "alpha" and labels["counts"]["labelled"] == 80
    assert labels["counts"]["by_task"] == {"qa": {"not_faithful": 32, "faithful": 48}}

    store = Store(settings.db_url)
    try:
        rows = [row for row in read_reviewed(store, scope="alpha") if isinstance(row, EvalRow)]
    finally:
        store.close()
    expected = adapt(rows, build_verifier(base_settings(settings.check)), source=log_source("DB", "alpha"),
                     scope="alpha")
    refit = labels["refit"]
    assert refit["profile"] == expected.document
    assert refit["thresholds"]["all"] == list(expected.fitted.pooled)
    assert refit["status"] == "would_change"
    assert refit["command"] == "groundwire adapt --from-log DB --scope alpha --out PROFILE"
    # Another scope has no labels: adapt's own refusal, with every label it needs.
    other = client.get("/v1/eval", headers={"X-API-Key": "key-beta"}).json()["labels"]
    assert other["counts"]["labelled"] == 0 and other["refit"]["status"] == "refused"
    assert other["refit"]["refusal"]["code"] == "no_rows" and set(other["refit"]["needed"]) == {"hallucinated",
                                                                                                  "faithful"}


def test_the_labels_are_refitted_when_a_verdict_is_added_not_on_every_request(client, monkeypatch) -> None:
    from groundwire.service import history

    calls: list[str] = []
    real = history.labels_section

    def counted(*args, **kwargs):
        calls.append(kwargs["scope"])
        return real(*args, **kwargs)

    monkeypatch.setattr(history, "labels_section", counted)

    def verified() -> str:
        response = client.post("/v1/verify", headers=ALPHA, json={
            "answer": "The pump runs at 40 litres per minute.",
            "chunks": [{"id": "S1", "text": "The pump runs at 40 litres per minute."}]})
        assert response.status_code == 200, response.text
        return str(response.json()["request_id"])

    first = verified()
    assert client.get("/v1/eval", headers=ALPHA).json()["labels"]["counts"]["labelled"] == 0
    verified()  # a new request changes the eval loop's sample, not the labels
    assert client.get("/v1/eval", headers=ALPHA).json()["labels"]["counts"]["labelled"] == 0
    assert calls == ["alpha"]
    assert client.post("/v1/feedback", headers=ALPHA, json={"request_id": first, "faithful": True}).status_code == 200
    assert client.get("/v1/eval", headers=ALPHA).json()["labels"]["counts"]["labelled"] == 1
    assert calls == ["alpha", "alpha"]


def test_the_labels_section_refits_with_the_targets_the_service_is_given(settings) -> None:
    """`serve --target-far/--target-frr/--confidence`: the refit shown is the one adapt run with those targets would
    write, and its command names them; by default they are adapt's own."""
    from dataclasses import replace

    from fastapi.testclient import TestClient

    from groundwire.calibration.adapt import Targets
    from groundwire.service import create_app

    assert (settings.refit_target_far, settings.refit_target_frr, settings.refit_confidence) == (
        Targets().far, Targets().frr, Targets().confidence)
    given = replace(settings, refit_target_far=0.2, refit_target_frr=0.05, refit_confidence=0.8)
    with TestClient(create_app(given), raise_server_exceptions=False) as client:
        refit = client.get("/v1/eval", headers=ALPHA).json()["labels"]["refit"]
    assert refit["targets"] == {"false_accept": 0.2, "false_reject": 0.05, "confidence": 0.8}
    assert refit["command"] == ("groundwire adapt --from-log DB --scope alpha --out PROFILE --target-far 0.2 "
                                "--target-frr 0.05 --confidence 0.8")
    # Fewer labels are needed for a looser false-accept target: the refusal counts them with the service's targets.
    assert refit["status"] == "refused" and refit["needed"] == dict(zip(
        ("hallucinated", "faithful"), Targets(0.2, 0.05, 0.8).needed(), strict=True))


def test_targets_out_of_range_are_refused_when_the_service_is_set_up(settings) -> None:
    from dataclasses import replace

    from groundwire.foundation.errors import InputError

    for changes in ({"refit_target_far": 0.0}, {"refit_target_frr": 1.0}, {"refit_confidence": 0.4}):
        with pytest.raises(InputError, match="refit_target_far and refit_target_frr"):
            replace(settings, **changes)
