"""Issue 57, item 2: an HTTP verify takes the pipeline's path, each step once: the scope resolved once, the chunks
converted once (at the route), the work limits checked once, every cascade stage planned once (and held to the
limits), and the report serialised once, that one dump both the response's report and the log row's. Counted with
path_counts.py (which prints the counts when run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from path_counts import CONVERTED, PLAN_LIMITS, SCOPES, WORK_LIMITS, counts_of_one_verify

pytest.importorskip("fastapi")

RESHAPES = ("report reshapes (Report.to_dict)", "reshapes (FastAPI validates and dumps the response model)")


@pytest.mark.parametrize("cascade", [False, True])
def test_a_verify_resolves_converts_checks_and_serialises_once(tmp_path: Path, cascade: bool) -> None:
    counts = counts_of_one_verify(tmp_path, cascade=cascade)
    assert counts[SCOPES] == 1
    assert counts[CONVERTED] == 1 and counts["chunk conversions (as_chunks)"] == 1  # not once per cascade stage
    assert counts[WORK_LIMITS] == 1
    assert counts[PLAN_LIMITS] == (2 if cascade else 1)  # each stage's plan, once
    assert counts["report reshapes (models.report_json)"] == 1
    assert all(counts[name] == 0 for name in RESHAPES)


def test_a_refused_verify_resolves_its_scope_once_though_its_failure_is_logged(tmp_path: Path) -> None:
    counts = counts_of_one_verify(tmp_path, max_pairs=1)  # 413 from the plan, on the worker: a failed-request row
    assert counts[SCOPES] == 1 and counts[WORK_LIMITS] == 1


def test_the_log_row_keeps_the_report_the_response_sent(client) -> None:
    """The request log's report is the response's dump itself: GET /v1/requests/{id} gives back the body sent."""
    from path_counts import ESCALATED
    from service_common import ALPHA

    sent = client.post("/v1/verify", headers=ALPHA, json=ESCALATED)
    assert sent.status_code == 200, sent.text
    logged = client.get(f"/v1/requests/{sent.json()['request_id']}", headers=ALPHA).json()["response"]
    assert logged == sent.json()
