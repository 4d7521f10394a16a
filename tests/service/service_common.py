"""Shared constants and steps of the service tests (a plain module: `from conftest import ...` is ambiguous across
suites)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LABELLED = Path(__file__).resolve().parents[2] / "examples" / "labelled.jsonl"
"""80 labelled answers: what a scope's reviewers label in the tests of its labels section and of --learn."""

KEYS = {"key-alpha": "alpha", "key-beta": "beta", "key-gamma": "gamma"}
ALPHA = {"Authorization": "Bearer key-alpha"}
BETA = {"X-API-Key": "key-beta"}


def review_every_labelled_answer(client: Any) -> None:
    """Verify each answer of LABELLED in the alpha scope and give its label as a reviewer's verdict."""
    from groundwire.data.rows import read_eval_jsonl

    for row in read_eval_jsonl(LABELLED):
        checked = client.post("/v1/verify", headers=ALPHA, json={
            "answer": row.answer, "question": row.question, "task": row.task,
            "chunks": [{"id": f"S{i + 1}", "text": text} for i, text in enumerate(row.context)]})
        assert checked.status_code == 200, checked.text
        given = client.post("/v1/feedback", headers=ALPHA, json={"request_id": checked.json()["request_id"],
                                                                 "faithful": not row.hallucinated})
        assert given.status_code == 200, given.text
