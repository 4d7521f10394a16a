from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from service_common import KEYS


@pytest.fixture
def settings(tmp_path: Path):
    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings

    return ServiceSettings(
        db_url=f"sqlite:///{tmp_path / 'service.db'}",
        api_keys=dict(KEYS),
        check=CheckSettings(scorer="lexical"),
        max_body_bytes=50_000,
        review_threshold=0.5,
        # No audit share: it picks by a hash of the (random) request id, so any answer could be queued for audit.
        # test_service_review_queue.py sets the share where it tests it.
        review_audit_share=0.0,
        high_risk_patterns=(r"\bdosage\b",),
        release="test-release",
    )


@pytest.fixture
def client(settings) -> Iterator:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
        yield test_client
