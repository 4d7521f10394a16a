"""The review queue rule: which logged requests a person should look at, and why.

A request is queued when its answer was escalated (its score lies in the routing's band), when it is one of the
audit share of accepted and rejected answers (a hash of its id; `--review-audit`), when its question or answer
matches one of the configured high-risk patterns (case-insensitive regexes), when an answer-level validator fired (a
fabricated citation scores no claim down, but a person should see it), when it failed after its answer was accepted
(service/failures.py: its answer was never routed, so a person decides), or, with `--review-threshold`, when its
score is below it. It leaves the queue once someone gives feedback on it. Membership and order are
`groundwire.evaluation.review_order`'s, on plain records, so that a bench replays the same queue without a server.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from groundwire.data.store import ERROR_KIND, RequestRecord
from groundwire.evaluation.review_order import UNKNOWN_TASK, Candidate, Labelled, Reason, reasons_for


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern, re.IGNORECASE) for pattern in patterns)


def flagged(*, score: float | None, texts: Sequence[str | None], threshold: float | None, patterns: tuple[str, ...],
            findings: Sequence[str] = (), failure: str | None = None) -> list[tuple[Reason, str]]:
    """The reasons beside the routing's own (escalated, audit), each as (code, what a person reads)."""
    reasons: list[tuple[Reason, str]] = [("failure", f"failed after its answer was accepted: {failure}")] if failure else []
    if threshold is not None and score is not None and score < threshold:
        reasons.append(("low_score", f"score {score:.2f} below {threshold:.2f}"))
    for pattern in _compiled(patterns):
        if any(text and pattern.search(text) for text in texts):
            reasons.append(("high_risk", f"matches high-risk pattern /{pattern.pattern}/"))
    reasons.extend(("validator", f"validator: {finding}") for finding in dict.fromkeys(findings))
    return reasons


def review_reasons(*, request_id: str, route: str | None, score: float | None, flags: Sequence[tuple[Reason, str]],
                   audit_share: float) -> list[tuple[Reason, str]]:
    """Every reason the request is queued for (empty: it is not), the routing's first."""
    codes = reasons_for(Candidate(id=request_id, arrival=0.0, route=route, flags=tuple(code for code, _ in flags)),
                        audit_share=audit_share)
    shown = f"{score:.2f}" if score is not None else "?"
    routing: list[tuple[Reason, str]] = []
    if "escalated" in codes:
        routing.append(("escalated", f"escalated (score {shown}): the routing asks a person"))
    if "audit" in codes:
        routing.append(("audit", f"audit: one of the {audit_share:.0%} of {route}ed answers a person checks"))
    return [*routing, *flags]


def candidate(record: RequestRecord, flags: Iterable[Reason]) -> Candidate:
    """A logged request as the queue's order reads it."""
    return Candidate(id=record.id or "", arrival=record.created_at.timestamp() if record.created_at else 0.0,
                     route=None if record.kind == ERROR_KIND else record.route,
                     task=task_of(record.extra), source=source_of(record.extra, [r.cite_id for r in record.retrieved]),
                     flags=tuple(flags))


def task_of(extra: Mapping[str, Any]) -> str:
    """The task the request named, as the labels section counts it."""
    task = extra.get("task")
    return task if isinstance(task, str) and task else UNKNOWN_TASK


def source_of(extra: Mapping[str, Any], cite_ids: Sequence[str]) -> str | None:
    """What the answer was checked against, for "a source not yet reviewed": its first chunk's document, else (inline
    chunks, whose ids are the caller's and repeat across unrelated requests) a hash of that chunk's text, else its
    first cite id."""
    body = extra.get("body")
    chunks = body.get("chunks") if isinstance(body, Mapping) else extra.get("chunks")
    first = chunks[0] if isinstance(chunks, list) and chunks and isinstance(chunks[0], Mapping) else None
    if first is not None and first.get("doc_id"):
        return f"doc:{first['doc_id']}"
    if first is not None and isinstance(first.get("text"), str):
        return "text:" + hashlib.blake2b(first["text"].encode(), digest_size=8).hexdigest()
    return f"chunk:{cite_ids[0]}" if cite_ids else None


def labelled(keys: Iterable[tuple[Mapping[str, Any], Sequence[str]]]) -> Labelled:
    """Labels per task and the reviewed sources, from the reviewed requests' `extra` and cite ids
    (`Store.reviewed_keys`)."""
    tasks: Counter[str] = Counter()
    sources: set[str] = set()
    for extra, cite_ids in keys:
        tasks[task_of(extra)] += 1
        if (source := source_of(extra, cite_ids)) is not None:
            sources.add(source)
    return Labelled(by_task=dict(tasks), sources=frozenset(sources))
