"""Labelled answers from the request log: a scope's reviewed requests as grounding-eval rows.

A reviewer's verdict (POST /v1/feedback with `faithful`, the review page) labels a logged answer; this module reads
a scope's verdicts back as the rows `groundwire eval` reads from a JSONL file, parsed by the same `data.rows`
parser, so whatever takes a labelled file (eval, `groundwire adapt`) takes the log too:

    from groundwire.data.labelled import read_reviewed
    from groundwire.data.store import Store

    rows = list(read_reviewed(Store.open("groundwire.db"), scope="team-a"))

Each row: `id` the request id, `task` as the request named it (else unknown), `question`, `context` the chunks the
answer was checked against (ids, doc ids and pages kept), `answer` the checked answer, `hallucinated` = not
faithful, and `spans` the claims the reviewer marked not faithful, at their character offsets in the answer
(label REVIEWED_SPAN). A verdict of "not faithful" with no claims marked is an answer-level label (no spans), as
most labelled files have. The verdict in force is the newest one on the request.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from groundwire.data.rows import EvalRow, RowError, parse_record
from groundwire.data.store.records import JudgeLabel
from groundwire.foundation.errors import ErrorCode, InputError

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.data.store import RequestRecord, ReviewVerdict, Store

LabelUse = Literal["human", "judge", "both"]
"""Which labels a fit reads: reviewers' verdicts, the LLM judge's (`serve --judge-labels`), or both (a request with
both takes the reviewer's)."""
LABEL_USES: tuple[LabelUse, ...] = get_args(LabelUse)

REVIEWED_SPAN = "reviewer: not faithful"
"""The label of a span a reviewer marked (grounding-eval rows' spans are [start, end, label])."""
SOURCE_PREFIX = "request-log:"
"""A reviewed row's `source` is this and its scope."""


def read_reviewed(store: Store, *, scope: str, strict: bool = False) -> Iterator[EvalRow | RowError]:
    """The scope's reviewed requests, oldest first, as grounding-eval rows (the verdict in force on each).

    As `data.rows.read_rows` does for a file: a request that cannot make a row (no context logged, say) is yielded
    as a RowError naming the request, or with `strict` raises an InputError."""
    for record, verdict in store.reviewed(scope=scope):
        row = parse_record(reviewed_record(record, verdict), source=SOURCE_PREFIX + scope)
        if strict and isinstance(row, RowError):
            raise InputError(f"reviewed request {row.id}: {row.error}", code=ErrorCode.INVALID_ROW)
        yield row


def check_label_use(use: str) -> LabelUse:
    """`use` as a LabelUse, or a clear error naming the choices."""
    if use not in LABEL_USES:
        raise InputError(f"labels: give human, judge or both, not {use!r}", code=ErrorCode.INVALID_OPTION)
    return use


def labels_in_force(store: Store, *, scope: str,
                    use: LabelUse = "human") -> list[tuple[RequestRecord, ReviewVerdict | JudgeLabel]]:
    """The scope's labelled requests, oldest first, each with the label it is fitted on: the reviewer's verdict in
    force, or the judge's newest label (a JudgeLabel: its kind), as `use` asks. With "both", a request a reviewer
    gave a verdict on takes the reviewer's, never the judge's."""
    human = store.reviewed(scope=scope) if use != "judge" else []
    if use == "human":
        return list(human)
    reviewed = {record.id for record, _ in human}
    judged = [(record, label) for record, label in store.judged(scope=scope) if record.id not in reviewed]
    both: list[tuple[RequestRecord, ReviewVerdict | JudgeLabel]] = [*human, *judged]
    return sorted(both, key=lambda pair: (pair[0].created_at is None, pair[0].created_at, pair[0].id or ""))


Stratum = tuple[str, str]
"""(period, route): the week an answer arrived in (`period_of`) and its route then ("accept", "escalate", "reject";
"none" for a check that failed before it routed). The review queue's chance of showing an answer to a reviewer
depends on both (calibration.selection)."""


def period_of(when: datetime | None) -> str:
    """A stratum's period: the ISO week of the answer's arrival, in UTC ("2026-W49"; "unknown" without a time). A
    week is what a review team's time is planned over, so the share of escalations it labels is roughly constant
    within one."""
    if when is None:
        return "unknown"
    year, week, _ = (when if when.tzinfo is None else when.astimezone(UTC)).isocalendar()
    return f"{year}-W{week:02d}"


def stratum_of(when: datetime | None, route: str | None) -> Stratum:
    return period_of(when), route or "none"


def label_strata(records: Iterable[RequestRecord]) -> dict[str, Stratum]:
    """The labelled requests' strata, by request id: with `log_traffic`, what calibration.selection weighs the
    labels by."""
    return {str(record.id): stratum_of(record.created_at, record.route) for record in records}


def log_traffic(store: Store, *, scope: str) -> Counter[Stratum]:
    """The scope's logged requests per stratum, labelled or not."""
    return Counter(stratum_of(when, route) for when, route in store.arrivals(scope=scope))


class LabelledRows(NamedTuple):
    """A scope's labelled requests as rows (`read_labelled`)."""

    rows: list[EvalRow | RowError]
    judged: frozenset[str]
    """The ids of the rows the judge labelled."""
    strata: dict[str, Stratum]
    """Each row's stratum (`label_strata`), read with it: the rows' selection weights need no second read."""


def read_labelled(store: Store, *, scope: str, use: LabelUse = "human", strict: bool = False) -> LabelledRows:
    """`read_reviewed` over the labels `use` names: the rows, the ids of those labelled by the judge, and their
    strata."""
    rows: list[EvalRow | RowError] = []
    judged: set[str] = set()
    labels = labels_in_force(store, scope=scope, use=use)
    for record, label in labels:
        row = parse_record(reviewed_record(record, label), source=SOURCE_PREFIX + scope)
        if strict and isinstance(row, RowError):
            raise InputError(f"labelled request {row.id}: {row.error}", code=ErrorCode.INVALID_ROW)
        if isinstance(label, JudgeLabel):
            judged.add(str(record.id))
        rows.append(row)
    return LabelledRows(rows, frozenset(judged), label_strata(record for record, _ in labels))


def reviewed_record(record: RequestRecord, verdict: ReviewVerdict | JudgeLabel) -> dict[str, Any]:
    """One reviewed request as a grounding-eval JSONL object (what a labelled file holds), plus a `review` object
    that keeps the verdict's id, time and marked claims, and its kind (human or judge) (the row parser ignores it; an
    exported file keeps it)."""
    report = record.report or {}
    answer = report.get("answer", record.response)
    claims = report.get("claims") or []
    spans = [span for c in verdict.unfaithful_claims
             if (span := _span(claims[c.index] if c.index < len(claims) else None, c.text, answer)) is not None]
    task = record.extra.get("task")
    return {
        "id": record.id,
        "task": task if isinstance(task, str) else None,
        "question": record.query,
        "context": _context(record),
        "answer": answer,
        "hallucinated": not verdict.faithful,
        "spans": spans,
        "source": f"{SOURCE_PREFIX}{record.scope}",
        "review": {"kind": "judge" if isinstance(verdict, JudgeLabel) else "human",
                   "verdict_id": verdict.id, "reviewed_at": verdict.created_at.isoformat(),
                   "unfaithful_claims": [{"index": c.index, "text": c.text} for c in verdict.unfaithful_claims]},
    }


def _context(record: RequestRecord) -> list[Any]:
    """The chunks the answer was checked against, as the response listed them (or, for a check that failed after its
    answer was accepted, as the failure was logged with them); else the context as logged."""
    body = record.extra.get("body")
    chunks = body.get("chunks") if isinstance(body, Mapping) else record.extra.get("chunks")
    if isinstance(chunks, Sequence) and chunks and all(isinstance(c, Mapping) for c in chunks):
        return [{key: c.get(key) for key in ("id", "text", "doc_id", "page")} for c in chunks]
    return [record.context] if record.context.strip() else []


def _span(claim: Any, text: str, answer: str) -> list[Any] | None:
    """[start, end, label] of a marked claim: its span as the report gives it, else where its text is in the answer
    (a claim an LLM reworded may be in neither: the answer-level label stands for it)."""
    span = claim.get("claim", {}).get("span") if isinstance(claim, Mapping) else None
    if isinstance(span, Sequence) and len(span) == 2 and all(isinstance(i, int) for i in span):
        start, end = int(span[0]), int(span[1])
        if 0 <= start < end <= len(answer):
            return [start, end, REVIEWED_SPAN]
    found = answer.find(text) if text else -1
    return None if found < 0 else [found, found + len(text), REVIEWED_SPAN]
