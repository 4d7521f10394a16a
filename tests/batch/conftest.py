"""Fixtures for the batch engine tests: one local Ray instance per session, and small input files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from batch_rows import BAD_LINES, GOOD_ROWS, write_jsonl


@pytest.fixture(scope="session")
def ray_local():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def mixed_jsonl(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "logs.jsonl", GOOD_ROWS, [line for line, _ in BAD_LINES])
