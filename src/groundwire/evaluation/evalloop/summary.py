"""The eval loop's metrics over a group of items, and the summary of a run's items: overall, per release, per
segment (and per day for the log), detection against gold labels where there are some, and failure examples."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from groundwire.evaluation.evalloop.items import GENERATOR_DRIFT, RETRIEVAL_MISS, UNDETERMINED, EvalItem
from groundwire.evaluation.metrics import detection_metrics
from groundwire.foundation.textutil import content_words
from groundwire.foundation.types import Route, Verdict

NONE_LABEL = "(none)"
_HEDGE_RE = re.compile(
    r"\b(?:may|might|could|possibly|perhaps|probably|likely|generally|typically|usually|often|sometimes|"
    r"it depends|depending on|not sure|unsure|unclear|i think|i believe|consult|contact (?:support|your)|"
    r"varies|vary|in some cases|can be)\b",
    re.IGNORECASE,
)
_DIGIT_RE = re.compile(r"\d")


def is_concrete(claim: str) -> bool:
    """A claim that commits to something: no hedge cue, and some content (a figure or a content word).

    Short answers count ("Arthur's Magazine." is concrete): an earlier rule that asked for three content
    words called 38% of HaluEval's correct short answers non-answers.
    """
    if _HEDGE_RE.search(claim):
        return False
    return bool(_DIGIT_RE.search(claim)) or bool(content_words(claim))


def metrics(items: Sequence[EvalItem]) -> dict[str, Any]:
    """The metric set for one group of items. A rate over an empty denominator is None, never NaN."""
    answered = [i for i in items if not i.refused]
    with_claims = [i for i in answered if i.claims]
    with_gold = [i for i in items if i.gold_ids]
    concrete = [sum(is_concrete(c.text) for c in i.claims) for i in answered]
    failures = {RETRIEVAL_MISS: 0, GENERATOR_DRIFT: 0, UNDETERMINED: 0}
    for item in items:
        if item.failure is not None:
            failures[item.failure] += 1
    return {
        "n": len(items),
        "faithfulness": _mean(
            sum(c.verdict == Verdict.SUPPORTED.value for c in i.claims) / len(i.claims) for i in with_claims
        ),
        "grounded_rate": _mean(float(all(c.verdict == Verdict.SUPPORTED.value for c in i.claims)) for i in with_claims),
        "refusal_rate": _mean(float(i.refused) for i in items),
        "escalation_rate": _mean(float(i.escalated) for i in items),
        "retrieval_hit_rate": _mean(float(bool(set(i.gold_ids or ()) & set(i.retrieved_ids))) for i in with_gold),
        "retrieval_n": len(with_gold),
        "claim_density": _mean(float(k) for k in concrete),
        "non_answer_rate": _mean(float(k == 0) for k in concrete),
        "thumbs_down_rate": _mean(float(i.thumbs_down) for i in items if i.thumbs_down is not None),
        "feedback_n": sum(i.thumbs_down is not None for i in items),
        "failures": failures,
    }


def grouped(items: Sequence[EvalItem], key: Callable[[EvalItem], str | None]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[EvalItem]] = defaultdict(list)
    for item in items:
        groups[key(item) or NONE_LABEL].append(item)
    return {name: metrics(group) for name, group in sorted(groups.items())}


def summarise(items: Sequence[EvalItem], *, by_day: bool = False, examples: int = 10) -> dict[str, Any]:
    """Overall, per release and per segment metrics (and per day for the log), plus up to `examples`
    failures of each kind."""
    out: dict[str, Any] = {
        "overall": metrics(items),
        "by_release": grouped(items, lambda i: i.release),
        "by_segment": grouped(items, lambda i: i.segment),
    }
    if by_day:
        out["by_day"] = grouped(
            [i for i in items if i.created_at], lambda i: i.created_at.date().isoformat() if i.created_at else None
        )
    labelled = [i for i in items if i.hallucinated is not None and i.score is not None and i.route is not None]
    if labelled and len({i.hallucinated for i in labelled}) == 2:
        out["detection"] = detection_metrics(
            [bool(i.hallucinated) for i in labelled],
            [float(i.score or 0.0) for i in labelled],
            [i.route != Route.ACCEPT.value for i in labelled],
        ).to_dict()
    out["failure_examples"] = [
        {
            "id": i.id,
            "failure": i.failure,
            "release": i.release,
            "segment": i.segment,
            "unsupported": list(i.unsupported_claims)[:3],
        }
        for kind in (RETRIEVAL_MISS, GENERATOR_DRIFT, UNDETERMINED)
        for i in [i for i in items if i.failure == kind][:examples]  # each kind shown, however rare
    ]
    return out


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None
