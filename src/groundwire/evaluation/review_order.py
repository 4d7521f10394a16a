"""The review queue's membership and order, on plain records: what the service's `GET /v1/review` serves and what a
bench that simulates reviewers (issue 56, `bench/learning_loop.py`) replays, with no server and no database.

Membership. An answer is queued when it was escalated (its score lies in the band between reject_at and accept_at:
the routing asks a person), when it is in the audit share (below), or for one of the service's other reasons: a
high-risk pattern, an answer-level validator finding, a check that failed after its answer was accepted, or a score
below the optional `--review-threshold`.

The audit share. Reviewers who only ever see escalations label a sample that cannot show the routing's own false
accepts (nor its false rejects): every accepted answer is above the band by construction. So a small share of the
accepted and rejected answers is queued too, picked by a hash of the request id: stable (an answer is in the audit
or not, whenever the queue is read) and testable. A refit weighs each label by how likely the queue was to show it
(calibration.selection): an audit label stands for 1 / share decided answers, an escalation's for the escalations
per label reviewers had time for. The nearer the two, the more the labels are worth (Kish's effective size): at 5%,
once the routing decides most answers, 50 labels a week were worth 16. The default, 15%, adds 6-9 audit items per
100 answers where 40-60% are decided. Measured with bench/learning_loop.py (a quarter of each week reviewed, 5 seeds,
week 6 against 5%): escalation 0.37 -> 0.24 on HaluEval, 0.62 -> 0.51 HAGRID, 0.79 -> 0.73 SummEdits, 0.73 -> 0.67
BEGIN WoW, 0.59 -> 0.56 WiCE, at false accept 0.03-0.09; ExpertQA 0.71 -> 0.83, its false accept 0.10 -> 0.07 (its
thresholds fitted on every label escalate 0.82). Picked from 5%, 15% and 25% on three of those families, the choice
beat 5% on the other three, both ways round.

Order "arrival": newest first (the queue's order before issue 56). Order "teach" (the default) puts first the answers
whose verdict teaches the refit most. Audit items lead, among themselves in teach order: they are few by
construction, and an audit sample that reviewers skip measures nothing. Every other item is ranked by the sum of two
components, each in [0, 1]:

- `scarcity`: 1 / (1 + n / `LABELS_HALF`), n the labels its task already has: 1 for a task nobody labelled, 0.5 at 50
  labels. A task's thresholds are fitted on its own labels, and the confidence margin of a fit on few labels is
  wide: each new label narrows it most where labels are few.
- `novelty`: 1 when its source (the document or chunk it was checked against) has no reviewed answer yet, else 0;
  0 when the source is unknown. Labels of one source are alike, and a profile must hold on sources it has not seen.

No component looks at the score. A first version also ranked answers near the band's edges first (the verdicts that
"decide where an edge belongs"), and `bench/learning_table.py` showed what that does: the refit's labels then crowd
at the edges, the faithful ones near accept_at, so the refitted reject threshold rises into faithful answers nobody
labelled. At week 6 false reject was 0.20 on HaluEval (0.36 in week 4) and 0.15 on BEGIN WoW, against 0.08 and 0.00
in arrival order, and the guard could not see it, its held-back labels being picked the same way. Within the band,
the queue must not choose by score.

Ties (equal sums) go to the newer answer, then the smaller id, so the order is total and repeatable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from groundwire.foundation.errors import ErrorCode, InputError

QueueOrder = Literal["teach", "arrival"]
ORDERS: tuple[QueueOrder, ...] = ("teach", "arrival")
Reason = Literal["escalated", "audit", "failure", "high_risk", "validator", "low_score"]
OTHER_REASONS: tuple[Reason, ...] = ("failure", "high_risk", "validator", "low_score")
"""The reasons a caller flags on a candidate (`Candidate.flags`); "escalated" and "audit" are computed here."""

DEFAULT_AUDIT_SHARE = 0.15
LABELS_HALF = 50
"""The labels a task has when its scarcity is 0.5."""
UNKNOWN_TASK = "unknown"
"""The task key of an answer whose request named none (as the labels section counts it)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One logged answer the queue may hold."""

    id: str
    arrival: float
    """Any number that grows with time (a timestamp): "arrival" order is newest first."""
    route: str | None
    """"accept", "escalate", "reject", or None (a check that failed before it routed)."""
    task: str = UNKNOWN_TASK
    source: str | None = None
    flags: tuple[Reason, ...] = ()
    """The caller's other reasons to queue it (`OTHER_REASONS`)."""


@dataclass(frozen=True, slots=True)
class Labelled:
    """What reviewers have labelled so far: labels per task, and the sources with a reviewed answer."""

    by_task: Mapping[str, int] = field(default_factory=dict)
    sources: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Teaching:
    """The teach order's components (module docstring); `total` is what an item is ranked by."""

    scarcity: float
    novelty: float

    @property
    def total(self) -> float:
        return self.scarcity + self.novelty

    def to_dict(self) -> dict[str, float]:
        return {"scarcity": round(self.scarcity, 4), "novelty": self.novelty, "total": round(self.total, 4)}


@dataclass(frozen=True, slots=True)
class QueueItem:
    candidate: Candidate
    reasons: tuple[Reason, ...]
    """Why it is queued, the reason that placed it first: "audit" or "escalated" where it is one, else its flags."""
    teaching: Teaching

    @property
    def reason(self) -> Reason:
        return self.reasons[0]


def check_audit_share(share: float) -> float:
    if not 0.0 <= share <= 1.0:
        raise InputError(f"the review audit share must lie in [0, 1], not {share}", code=ErrorCode.INVALID_SETTINGS)
    return share


def check_order(order: str) -> QueueOrder:
    for known in ORDERS:
        if order == known:
            return known
    raise InputError(f"unknown review order {order!r}: give one of {', '.join(ORDERS)}",
                     code=ErrorCode.INVALID_SETTINGS)


def in_audit(request_id: str, share: float) -> bool:
    """Whether a decided answer is in the audit share: a hash of its id, read as a number in [0, 1), below `share`.
    The same id is always in or always out; over many ids the share in is `share`."""
    digest = hashlib.blake2b(f"audit:{request_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < share


def reasons_for(candidate: Candidate, *, audit_share: float) -> tuple[Reason, ...]:
    """Why the candidate is queued (empty: it is not)."""
    first: tuple[Reason, ...] = ()
    if candidate.route == "escalate":
        first = ("escalated",)
    elif candidate.route in ("accept", "reject") and in_audit(candidate.id, audit_share):
        first = ("audit",)
    unknown = [flag for flag in candidate.flags if flag not in OTHER_REASONS]
    if unknown:
        raise InputError(f"unknown review reasons {unknown}: give {', '.join(OTHER_REASONS)}",
                         code=ErrorCode.INVALID_SETTINGS)
    return (*first, *dict.fromkeys(candidate.flags))


def teaching(candidate: Candidate, labelled: Labelled) -> Teaching:
    """The teach order's components for one candidate (module docstring)."""
    scarcity = 1.0 / (1.0 + labelled.by_task.get(candidate.task, 0) / LABELS_HALF)
    novelty = 1.0 if candidate.source is not None and candidate.source not in labelled.sources else 0.0
    return Teaching(scarcity=scarcity, novelty=novelty)


def order_queue(candidates: Iterable[Candidate], *, labelled: Labelled = Labelled(), order: QueueOrder = "teach",
                audit_share: float = DEFAULT_AUDIT_SHARE) -> list[QueueItem]:
    """The queued candidates, each with its reasons and teaching components, in `order` (module docstring)."""
    check_audit_share(share=audit_share)
    check_order(order)
    items = [QueueItem(c, reasons, teaching(c, labelled))
             for c in candidates if (reasons := reasons_for(c, audit_share=audit_share))]

    def newest(item: QueueItem) -> tuple[float, str]:
        return -item.candidate.arrival, item.candidate.id

    if order == "arrival":
        return sorted(items, key=newest)
    return sorted(items, key=lambda item: (item.reason != "audit", -round(item.teaching.total, 9), *newest(item)))
