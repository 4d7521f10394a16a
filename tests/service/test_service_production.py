"""Issue 14, production defaults of the service: rate limits, work limits, the eval cache, offline /docs,
the OpenAPI security scheme, slow bodies, read-only keys and the logging of failed requests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from service_common import ALPHA, BETA

pytest.importorskip("fastapi")

CHUNK = {"id": "S1", "text": "The pump runs at 40 litres per minute."}
VERIFY = {"answer": "The pump runs at 40 litres per minute.", "chunks": [CHUNK]}


@contextmanager
def serving(settings: Any, **changes: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(replace(settings, **changes)), raise_server_exceptions=False) as client:
        yield client


# --- 1. rate limiting ---------------------------------------------------------------------------------------


def test_rate_limit_is_per_key_and_answers_429_with_retry_after(settings) -> None:  # noqa: ANN001
    with serving(settings, rate_limit="3/minute") as client:
        for _ in range(3):
            assert client.get("/v1/requests", headers=ALPHA).status_code == 200
        limited = client.get("/v1/requests", headers=ALPHA)
        assert limited.status_code == 429, limited.text
        assert 1 <= int(limited.headers["retry-after"]) <= 60
        error = limited.json()["error"]
        assert error["code"] == "rate_limited" and error["details"]["limit"] == "3/minute"
        # Another key has its own budget.
        assert client.get("/v1/requests", headers=BETA).status_code == 200


def test_wrong_keys_are_rate_limited_by_address(settings) -> None:  # noqa: ANN001
    with serving(settings, rate_limit="2/minute") as client:
        wrong = {"Authorization": "Bearer not-a-key"}
        assert [client.get("/v1/requests", headers=wrong).status_code for _ in range(3)] == [401, 401, 429]


def test_no_rate_limit_by_default(settings) -> None:  # noqa: ANN001
    assert settings.rate_limit is None
    with serving(settings) as client:
        assert {client.get("/v1/requests", headers=ALPHA).status_code for _ in range(30)} == {200}


def test_a_malformed_rate_limit_fails_at_start_up(settings) -> None:  # noqa: ANN001
    from groundwire.core.errors import InputError

    with pytest.raises(InputError, match="60 a minute"):
        replace(settings, rate_limit="60 a minute")


def test_the_rate_limit_can_come_from_groundwire_toml(tmp_path) -> None:  # noqa: ANN001
    from groundwire.config import load_config

    (tmp_path / "groundwire.toml").write_text('[serve]\nrate_limit = "100/minute"\n')
    assert load_config(tmp_path / "groundwire.toml", env={}).serve.rate_limit == "100/minute"
