"""A two-stage cascade measured leave-one-dataset-out (issue 19): the small model decides what it is sure of, the
answers it escalates go to the larger model, and what both leave open goes to the judge.

Each stage has its own recipe (combiner and thresholds), fitted on the other families only. Stage 2's thresholds
are fitted on the answers stage 1 escalates in those families, since those are the only answers it will see (the
hard ones), and at the false-accept and false-reject budget stage 1 left unspent: refitting thresholds on a
narrower band alone would decide more answers by spending more errors, with no better model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.families import family
from groundwire.calibration.lodo import Figures, Key, Routed, by_family, figures, fittable, route_by_key
from groundwire.calibration.recipe import Fitted
from groundwire.calibration.thresholds import Routing
from groundwire.foundation.types import Route


def accepted(answer: Routed) -> bool:
    """ACCEPT under verify()'s routing: score >= accept_at."""
    return answer.score >= answer.accept_at


def rejected(answer: Routed) -> bool:
    """REJECT under verify()'s routing: not accepted, and score <= reject_at (the reject guard's escalations aside)."""
    return answer.route is Route.REJECT


def decided(answer: Routed) -> bool:
    return accepted(answer) or rejected(answer)


@dataclass(frozen=True, slots=True)
class CascadeFigures:
    """Per family: the cascade's routing figures, each stage's alone, and what stage 2 costs."""

    cascade: Figures
    small: Figures
    large: Figures
    sent_to_large: float
    """Share of the family's answers stage 1 escalated (each costs a pass of the larger model)."""


def _without(rows: Sequence[ClaimRow], held_out: str) -> list[ClaimRow]:
    return [r for r in fittable(rows) if family(r.file, r.task) != held_out]


StageFit = Callable[[Sequence[ClaimRow], Routing], Fitted]
"""A stage's recipe: its combiner and thresholds fitted on these rows at these target rates."""


def stage_two_routing(first: Mapping[Key, Routed], routing: Routing) -> Routing:
    """Stage 2's targets, so that the two stages together keep the cascade's: stage 2 may add only the false
    accepts and false rejects stage 1 left unspent, spread over the answers it is sent."""
    hallucinated = [a for a in first.values() if a.hallucinated]
    faithful = [a for a in first.values() if not a.hallucinated]
    accepted_wrongly = sum(accepted(a) for a in hallucinated)
    rejected_wrongly = sum(rejected(a) for a in faithful)
    sent_hallucinated = sum(not decided(a) for a in hallucinated)
    sent_faithful = sum(not decided(a) for a in faithful)

    def share(target: float, total: int, spent: int, sent: int) -> float:
        return min(1.0, max(0.0, target * total - spent) / sent) if sent else target

    return {**routing,
            "target_far": share(routing.get("target_far", 0.10), len(hallucinated), accepted_wrongly, sent_hallucinated),
            "target_frr": share(routing.get("target_frr", 0.10), len(faithful), rejected_wrongly, sent_faithful)}


class Stages(NamedTuple):
    first: Fitted
    second: Fitted
    second_targets: Routing
    """The false-accept and false-reject targets stage 2 was fitted at (`stage_two_routing`)."""


def stage_one_routing(routing: Routing, share: float) -> Routing:
    """Stage 1's targets when it may spend only `share` of the cascade's false-accept and false-reject budgets
    (the rest is left to stage 2); share 1 is the cascade's own targets."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"stage 1's share of the budget must be in (0, 1], not {share}")
    return {**routing, "target_far": routing.get("target_far", 0.10) * share,
            "target_frr": routing.get("target_frr", 0.10) * share}


def fit_stages(small: Sequence[ClaimRow], large: Sequence[ClaimRow], fit: StageFit, routing: Routing, *,
               first: Fitted | None = None, fit_second: StageFit | None = None, first_share: float = 1.0) -> Stages:
    """Stage 1 fitted on `small` at `routing`'s targets, or at `first_share` of them (`stage_one_routing`), or
    `first`, a stage 1 already fitted (e.g. the shipped one); stage 2 on the `large` rows of the answers stage 1
    escalates there (the only answers it will see), at the targets stage 1 left unspent (`stage_two_routing`).
    `small` and `large` are claim rows of the same answers, scored by each model. `fit_second`: stage 2's own
    recipe, if it differs from stage 1's."""
    stage1 = first if first is not None else fit(small, stage_one_routing(routing, first_share))
    routed = route_by_key(stage1, small)
    sent = {key for key, answer in routed.items() if not decided(answer)}
    escalated = [r for r in large if (r.file, r.row_id) in sent]
    # Too few escalated answers to set thresholds on (both classes needed): stage 2 is fitted on all of them.
    if len({r.hallucinated for r in escalated}) < 2:
        escalated = list(large)
    targets = stage_two_routing(routed, routing)
    return Stages(stage1, (fit_second or fit)(escalated, targets), targets)


def cascade_route(stage1: Fitted, stage2: Fitted, small: Sequence[ClaimRow],
                  large: Sequence[ClaimRow]) -> tuple[dict[Key, Routed], list[Routed]]:
    """(stage 1's routing of every answer, the cascade's): an answer stage 1 escalates takes stage 2's route."""
    first = route_by_key(stage1, small)
    second = route_by_key(stage2, large)
    return first, [answer if decided(answer) else second[key] for key, answer in first.items()]


def same_answers(small: Sequence[ClaimRow], large: Sequence[ClaimRow]) -> None:
    small_keys = {(r.file, r.row_id) for r in small}
    large_keys = {(r.file, r.row_id) for r in large}
    if small_keys != large_keys:
        raise ValueError(f"the two feature sets hold different answers ({len(small_keys ^ large_keys)} differ): "
                         "collect both from the same files with the same --limit and seed")


def cascade_lodo(small: Sequence[ClaimRow], large: Sequence[ClaimRow], fit: StageFit, routing: Routing, *,
                 fit_second: StageFit | None = None, first_share: float = 1.0) -> dict[str, CascadeFigures]:
    """Per held-out family: both stages fitted on the other families (`fit_stages`), then every answer of the
    family routed by the cascade. `small` and `large` are claim rows of the same answers (the same seeded
    sample), scored by each model."""
    same_answers(small, large)
    large_families = by_family(large)
    out: dict[str, CascadeFigures] = {}
    for held_out, test_small in by_family(small).items():
        large_training = _without(large, held_out)
        stage1, stage2, _ = fit_stages(_without(small, held_out), large_training, fit, routing, fit_second=fit_second,
                                       first_share=first_share)
        first, combined = cascade_route(stage1, stage2, test_small, large_families[held_out])
        large_alone = route_by_key(fit(large_training, routing), large_families[held_out])
        out[held_out] = CascadeFigures(
            cascade=figures(combined),
            small=figures(list(first.values())),
            large=figures(list(large_alone.values())),
            sent_to_large=sum(not decided(a) for a in first.values()) / max(len(first), 1),
        )
    return out


def accept_only(fit: StageFit) -> StageFit:
    """`fit` with its reject thresholds at 0: a second stage that may accept an escalated answer or leave it to
    the judge, never reject it (its reject thresholds, fitted on other families' escalated answers, did not
    transfer: FRR .688 on RAGTruth data2text, results/RESULTS.md)."""

    def fitted(rows: Sequence[ClaimRow], targets: Routing) -> Fitted:
        f = fit(rows, targets)
        return replace(f, pooled=(f.pooled[0], 0.0), by_key={key: (accept, 0.0) for key, (accept, _) in f.by_key.items()})

    return fitted
