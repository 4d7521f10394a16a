"""`serve --profile`: the service routes every check by the profile it was started with, and names it."""

from __future__ import annotations

import json
from pathlib import Path

from service_common import ALPHA, KEYS


def test_the_service_routes_by_its_profile_and_names_it(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings, create_app

    profile = tmp_path / "support"
    profile.mkdir()
    (profile / "profile.json").write_text(json.dumps({
        "format": 1, "base_model": "lexical-baseline",
        "calibration": {"thresholds": [0.55, 0.25], "task_thresholds": {}, "decide_at": 0.4, "combiner": None}}))
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", api_keys=dict(KEYS),
                               check=CheckSettings(scorer="lexical", profile=str(profile)))
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        response = client.post("/v1/verify", headers=ALPHA, json={
            "answer": "Refunds are accepted within 30 days.",
            "chunks": [{"id": "S1", "text": "Refunds are accepted within 30 days of purchase."}]})
    assert response.status_code == 200, response.text
    extra = response.json()["report"]["extra"]
    assert extra["profile"] == "support"
    assert extra["thresholds"] == {"accept_at": 0.55, "reject_at": 0.25}
