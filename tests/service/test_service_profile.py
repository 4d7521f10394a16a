"""`serve --profile`: the service routes every check by the profile it was started with, and names it."""

from __future__ import annotations

import json
from pathlib import Path

from service_common import ALPHA, BETA, KEYS


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
    meta = response.json()["report"]["meta"]
    assert meta["profile"] == "support"
    assert meta["thresholds"] == {"accept_at": 0.55, "reject_at": 0.25, "decide_at": None}


def _profile(folder: Path, accept_at: float, reject_at: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profile.json").write_text(json.dumps({
        "format": 1, "base_model": "lexical-baseline",
        "calibration": {"thresholds": [accept_at, reject_at], "task_thresholds": {}, "decide_at": None,
                        "combiner": None}}))


def test_each_scope_is_routed_by_its_own_profile_replaced_without_a_restart(tmp_path: Path) -> None:
    import os

    from fastapi.testclient import TestClient

    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings, create_app

    _profile(tmp_path / "profiles" / "alpha", 0.55, 0.25)
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", api_keys=dict(KEYS),
                               check=CheckSettings(scorer="lexical"), profiles=str(tmp_path / "profiles"))
    body = {"answer": "Refunds are accepted within 30 days.",
            "chunks": [{"id": "S1", "text": "Refunds are accepted within 30 days of purchase."}]}
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        def meta(headers: dict[str, str]) -> dict[str, object]:
            response = client.post("/v1/verify", headers=headers, json=body)
            assert response.status_code == 200, response.text
            return response.json()["report"]["meta"]

        three_way = {"decide_at": None}
        alpha = meta(ALPHA)
        assert (alpha["profile"], alpha["thresholds"]) == ("alpha", {"accept_at": 0.55, "reject_at": 0.25} | three_way)
        beta = meta(BETA)
        assert beta["profile"] is None and beta["thresholds"] == {"accept_at": 0.8, "reject_at": 0.2} | three_way

        # The tenant refits: the next check reads the new profile, the service still running.
        _profile(tmp_path / "profiles" / "alpha", 0.65, 0.15)
        stamp = (tmp_path / "profiles" / "alpha" / "profile.json").stat().st_mtime_ns + 10**9
        os.utime(tmp_path / "profiles" / "alpha" / "profile.json", ns=(stamp, stamp))
        assert meta(ALPHA)["thresholds"] == {"accept_at": 0.65, "reject_at": 0.15} | three_way

        # A broken change is logged and the scope keeps the profile it had.
        (tmp_path / "profiles" / "alpha" / "profile.json").write_text("{")
        os.utime(tmp_path / "profiles" / "alpha" / "profile.json", ns=(stamp + 10**9, stamp + 10**9))
        assert meta(ALPHA)["thresholds"] == {"accept_at": 0.65, "reject_at": 0.15} | three_way


def test_a_bad_profile_stops_the_start(tmp_path: Path) -> None:
    import pytest

    from groundwire.foundation.errors import InputError
    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings
    from groundwire.service.runtime import Runtime

    (tmp_path / "profiles" / "alpha").mkdir(parents=True)
    (tmp_path / "profiles" / "alpha" / "profile.json").write_text("{}")
    runtime = Runtime(ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", api_keys=dict(KEYS),
                                      check=CheckSettings(scorer="lexical"), profiles=str(tmp_path / "profiles")))
    with pytest.raises(InputError, match="alpha"):
        runtime.start()


def _version(folder: Path, accept_at: float, reject_at: float) -> None:
    """A new version of the profile folder, as `adapt --force` or the refit writes one."""
    from groundwire.calibration import versions

    def fill(staging: Path) -> None:
        _profile(staging, accept_at, reject_at)

    versions.install(folder, fill, by="test")


def test_a_scope_s_profile_versions_are_named_in_reports_and_rolled_back_by_the_api(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings, create_app

    alpha = tmp_path / "profiles" / "alpha"
    _version(alpha, 0.55, 0.25)
    _version(alpha, 0.65, 0.15)
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", api_keys=dict(KEYS),
                               check=CheckSettings(scorer="lexical"), profiles=str(tmp_path / "profiles"))
    body = {"answer": "Refunds are accepted within 30 days.",
            "chunks": [{"id": "S1", "text": "Refunds are accepted within 30 days of purchase."}]}
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        def meta() -> dict[str, object]:
            response = client.post("/v1/verify", headers=ALPHA, json=body)
            assert response.status_code == 200, response.text
            return response.json()["report"]["meta"]

        first = meta()
        assert (first["profile"], first["profile_version"], first["thresholds"]["accept_at"]) == ("alpha", "v0002", 0.65)
        state = client.get("/v1/profile", headers=ALPHA).json()
        assert (state["version"], state["versions"]) == ("v0002", ["v0001", "v0002"])
        assert [e["event"] for e in state["history"]] == ["installed", "replaced"]

        rolled = client.post("/v1/profile/rollback", headers=ALPHA, json={"reason": "too lax"})
        assert rolled.status_code == 200, rolled.text
        assert rolled.json()["version"] == "v0001" and rolled.json()["history"][-1]["by"] == "api (scope alpha)"
        after = meta()
        assert (after["profile_version"], after["thresholds"]["accept_at"]) == ("v0001", 0.55)

        unknown = client.post("/v1/profile/rollback", headers=ALPHA, json={"to": "v0009"})
        assert unknown.status_code == 422 and "no version 'v0009'" in unknown.json()["error"]["message"]
        none = client.get("/v1/profile", headers=BETA)
        assert none.status_code == 404 and none.json()["error"]["code"] == "profile_not_found"
