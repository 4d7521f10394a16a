"""Labels weighted by how likely the review queue was to pick them (issue 56: a refit and its guard on a queue's
labels).

Reviewers label what the queue shows them: every escalated answer (as many as they have time for) and a small audit
share of the accepted and rejected ones. So a scope's labels over-sample the band between the thresholds, and
under-sample the answers the routing decided, the false accepts among them, by a factor of ten or more. Fitted or
judged as they come, they under-state the false-accept rate of any threshold below the one in force:
bench/learning_table.py measured a week-6 false accept of 0.11-0.14 on HaluEval, HAGRID and ExpertQA that way.

The weights here undo that by post-stratification. Each labelled answer belongs to a stratum, (period, route): the
week it arrived in and how it was routed then (the routing decides whether the queue holds it, and the reviewers'
time per week how many of those it shows). Its weight is the stratum's answers over its labelled answers, the
inverse of the share of the stratum that was labelled, so that labels count as much as the traffic they stand for.
Nothing about the queue's order enters, which is why the queue must not choose by score within a stratum
(evaluation.review_order).

The weights are scaled to sum to Kish's effective sample size, (sum w)^2 / sum w^2, not to the traffic: a fit's
confidence margin (operating.allowed_errors) and the guard's interval then rest on as many labels as the weights are
worth. A few audit labels standing for many decided answers count for less than their weight suggests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from groundwire.calibration.combine import ClaimRow
from groundwire.data.labelled import Stratum, log_traffic

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.data.store import Store

K = TypeVar("K")


def selection_weights(strata: Mapping[K, Stratum], traffic: Mapping[Stratum, int]) -> dict[K, float]:
    """Each labelled answer's weight (`strata`: answer -> its stratum; `traffic`: the stratum's answers, labelled or
    not): the stratum's answers over its labelled ones, scaled so that the weights sum to their effective sample
    size. A stratum whose traffic is unknown or smaller than its labels (a label on an answer the count missed)
    counts its labels once each. Every weight is 1 when every stratum was labelled at the same rate."""
    labelled = Counter(strata.values())
    raw = {key: max(traffic.get(stratum, 0), labelled[stratum]) / labelled[stratum]
           for key, stratum in strata.items()}
    total, squares = sum(raw.values()), sum(w * w for w in raw.values())
    return {key: w * total / squares for key, w in raw.items()} if squares else {}


def weighted_by_selection(rows: Sequence[ClaimRow], weights: Mapping[str, float]) -> list[ClaimRow]:
    """The rows with each answer's label weight (1, or a judge's: ClaimRow.weight) times its selection weight
    (by row id; an answer without one keeps its weight)."""
    return [replace(r, weight=r.weight * weights[r.row_id]) if r.row_id in weights else r for r in rows]


def queue_weights(store: Store, *, scope: str, strata: Mapping[str, Stratum]) -> dict[str, float]:
    """The selection weight of each of the scope's labelled requests (`strata`: request id -> its stratum,
    data.labelled.label_strata), by request id, against the scope's log."""
    return selection_weights(strata, log_traffic(store, scope=scope))
