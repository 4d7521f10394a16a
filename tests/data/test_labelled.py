"""The log reader: reviewed requests logged without the service's response body, or without a context, still come
back as rows or as row errors that name them (nothing dropped)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from groundwire import Verifier
from groundwire.data.labelled import REVIEWED_SPAN, read_reviewed
from groundwire.data.rows import UNKNOWN_TASK, EvalRow, RowError
from groundwire.data.store import RequestRecord, Store
from groundwire.foundation.errors import InputError
from groundwire.foundation.types import Chunk
from groundwire.scoring import get_scorer

pytest.importorskip("sqlalchemy")

CONTEXT = "The cluster starts with start.sh. It needs 32 GB of RAM."
ANSWER = "The cluster starts with start.sh. It needs 64 GB of RAM."


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path / 'log.db'}")
    yield s
    s.close()


def _logged(store: Store, *, context: str, drop_spans: bool = False) -> str:
    report = Verifier(get_scorer("lexical")).verify(ANSWER, [Chunk(id="S1", text=CONTEXT)])
    record = RequestRecord.from_report(report, scope="ops", context=context)
    if drop_spans:  # a report written before claims carried spans, or by another tool
        claims = [{**c, "claim": {k: v for k, v in c["claim"].items() if k != "span"}} for c in record.report["claims"]]
        record = RequestRecord(**{**{f: getattr(record, f) for f in record.__slots__},
                                  "report": {**record.report, "claims": claims}})
    return store.log_request(record)


@pytest.mark.parametrize("drop_spans", [False, True])
def test_a_row_logged_by_the_library_reads_with_its_context_and_claim_span(store: Store, drop_spans: bool) -> None:
    request_id = _logged(store, context=CONTEXT, drop_spans=drop_spans)
    store.add_review(request_id, scope="ops", faithful=False, unfaithful_claims=[1])
    [row] = read_reviewed(store, scope="ops")
    assert isinstance(row, EvalRow)
    assert (row.id, row.task, row.context, row.answer, row.hallucinated) == (request_id, UNKNOWN_TASK, (CONTEXT,),
                                                                               ANSWER, True)
    [(start, end, label)] = row.spans
    assert (ANSWER[start:end], label) == ("It needs 64 GB of RAM.", REVIEWED_SPAN)


def test_a_request_without_context_is_a_row_error_that_names_it(store: Store) -> None:
    request_id = _logged(store, context="  ")
    store.add_review(request_id, scope="ops", faithful=True)
    [row] = read_reviewed(store, scope="ops")
    assert isinstance(row, RowError) and row.id == request_id and "context" in row.error
    with pytest.raises(InputError, match=f"reviewed request {request_id}") as caught:
        list(read_reviewed(store, scope="ops", strict=True))
    assert caught.value.code == "invalid_row"
