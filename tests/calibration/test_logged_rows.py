"""The refit's claim rows from logged reports (combine.claim_rows_of_logged): the rows a check gives, without the
check; None where the logged report cannot give them, so that answer is checked again."""

from __future__ import annotations

import json

from groundwire.calibration import combine
from groundwire.config import CheckSettings
from groundwire.data.rows import EvalRow
from groundwire.pipeline import CheckItem, build_verifier, check


def test_logged_reports_give_the_rows_a_check_gives_and_others_none() -> None:
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    row = EvalRow(id="r1", answer="The museum opened in 1800. It has a glass roof.",
                  context=["The museum opened in 1800 by the council."], hallucinated=True, task="qa", question=None,
                  spans=(), source="test", line=1)
    report = check(verifier, CheckItem(row.answer, row.context, task=row.task))
    logged = json.loads(json.dumps(report.to_dict()))  # as the request log keeps it
    expected = combine.claim_rows_of(row, report, file="request_log")
    assert len(expected) == 2
    assert combine.claim_rows_of_logged(row, logged, file="request_log", model_id=verifier.scorer.model_id) == expected
    assert combine.claim_rows_of_logged(row, logged, file="request_log", model_id="another-model") is None
    for claim in logged["claims"]:
        del claim["features"]
    assert combine.claim_rows_of_logged(row, logged, file="request_log", model_id=verifier.scorer.model_id) is None
