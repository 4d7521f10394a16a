"""The eval loop's labels section: how many of a scope's answers reviewers have labelled, and whether a refit of
the routing thresholds on those labels would move them.

The refit is `groundwire eval --target-far/--target-frr`'s: the labelled rows (`data.labelled.read_reviewed`) are
checked by the verifier in force (`evaluation.evaluate`), and `operating.thresholds_for_targets` sets the pair that
meets the targets on their scores. It is only reported, never written. Below MIN_PER_CLASS labels of either class it
is not made at all ("not enough labels", with how many more of each class are needed): that is the number of
answers of a class `thresholds_for_targets` takes to set a group's threshold on its own (its `min_group`), and at
the default targets a threshold set on fewer moves by a whole answer's score with each new label. The rates a
refit would give are estimated by cross-validation within the labels: the pair is never reported with the rates of
the answers it was fitted on.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from groundwire.data.labelled import read_reviewed
from groundwire.data.rows import EvalRow, RowError
from groundwire.evaluation.evaluate import evaluate
from groundwire.evaluation.operating import (
    DEFAULT_TARGET_FAR,
    DEFAULT_TARGET_FRR,
    RoutingRates,
    rates_of_routes,
    thresholds_for_targets,
)
from groundwire.foundation.types import Thresholds

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.core.verifier import Verifier
    from groundwire.data.store import Store

MIN_PER_CLASS = 30
"""Labels of each class (faithful, not faithful) before a refit is made."""
FOLDS = 5
"""Folds of the cross-validation that estimates a refit's rates."""

RefitStatus = Literal["not_enough_labels", "unchanged", "would_change"]


@dataclass(frozen=True, slots=True)
class LabelCounts:
    labelled: int
    """Reviewed answers that make a row (a verdict in force on a logged answer with a context)."""
    not_faithful: int
    faithful: int
    claim_marked: int
    """Not-faithful answers with claims marked (claim-level labels)."""
    unreadable: int
    """Reviewed requests that make no row (RowError), counted apart."""
    by_task: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Refit:
    status: RefitStatus
    target_far: float
    target_frr: float
    in_force: Thresholds
    """The verifier's (accept_at, reject_at) for these answers: their task's, when they all name one, else pooled."""
    refit: Thresholds | None = None
    needed: dict[str, int] = field(default_factory=dict)
    """More labels needed per class before a refit is made (empty when none are)."""
    rates_in_force: RoutingRates | None = None
    """Measured on the labelled answers as the verifier routes them."""
    rates_refit: RoutingRates | None = None
    """What refitting gives on answers it was not fitted on: FOLDS-fold cross-validation over the labels (each fold
    routed, by score, at thresholds fitted on the others), never the in-sample rates of the reported pair."""
    unchecked: int = 0
    """Labelled rows the verifier could not check (left out of the refit)."""


@dataclass(frozen=True, slots=True)
class LabelsSection:
    scope: str
    counts: LabelCounts
    refit: Refit

    def to_dict(self) -> dict[str, Any]:
        refit = self.refit
        return {
            "scope": self.scope,
            "counts": {"labelled": self.counts.labelled, "not_faithful": self.counts.not_faithful,
                       "faithful": self.counts.faithful, "claim_marked": self.counts.claim_marked,
                       "unreadable": self.counts.unreadable, "by_task": dict(self.counts.by_task)},
            "refit": {"status": refit.status, "target_far": refit.target_far, "target_frr": refit.target_frr,
                      "min_per_class": MIN_PER_CLASS, "in_force": list(refit.in_force),
                      "refit": None if refit.refit is None else list(refit.refit), "needed": dict(refit.needed),
                      "rates_in_force": None if refit.rates_in_force is None else refit.rates_in_force.to_dict(),
                      "rates_refit": None if refit.rates_refit is None else refit.rates_refit.to_dict(),
                      "unchecked": refit.unchecked},
        }

    def lines(self) -> list[str]:
        """What the command prints: the count, then what a refit would do."""
        c, r = self.counts, self.refit
        out = [f"labels ({self.scope}): {c.labelled} reviewed answers, {c.not_faithful} not faithful "
               f"({c.claim_marked} with claims marked), {c.faithful} faithful"
               + (f"; {c.unreadable} reviewed requests make no row" if c.unreadable else "")]
        targets = f"false accept {r.target_far:g}, false reject {r.target_frr:g}"
        in_force = _pair(r.in_force)
        if r.status == "not_enough_labels":
            more = " and ".join(f"{n} more {name.replace('_', ' ')}" for name, n in r.needed.items())
            out.append(f"refit at targets {targets}: not enough labels (needs {more}; {MIN_PER_CLASS} of each "
                       f"class); thresholds in force {in_force}")
        elif r.status == "unchanged":
            out.append(f"refit at targets {targets}: unchanged, {in_force}")
        else:
            out.append(f"refit at targets {targets}: would change {in_force} -> {_pair(r.refit)}")
        if r.rates_in_force is not None and r.rates_refit is not None:
            out.append(f"  on these labels: now {_rates(r.rates_in_force)}; refit, {FOLDS}-fold cross-validated, "
                       f"{_rates(r.rates_refit)}")
        return out


def labels_section(store: Store, verifier: Verifier, *, scope: str, target_far: float = DEFAULT_TARGET_FAR,
                   target_frr: float = DEFAULT_TARGET_FRR) -> LabelsSection:
    """Count the scope's labelled answers; with MIN_PER_CLASS of each class, check them with `verifier` and refit
    its thresholds to the targets as `eval --target-far/--target-frr` does (nothing is written)."""
    read = list(read_reviewed(store, scope=scope))
    rows = [row for row in read if isinstance(row, EvalRow)]
    not_faithful = sum(bool(row.hallucinated) for row in rows)
    counts = LabelCounts(labelled=len(rows), not_faithful=not_faithful, faithful=len(rows) - not_faithful,
                         claim_marked=sum(bool(row.spans) for row in rows),
                         unreadable=sum(isinstance(row, RowError) for row in read),
                         by_task=dict(sorted(Counter(row.task for row in rows).items())))
    tasks = {row.given_task for row in rows}
    in_force = verifier.thresholds_for(next(iter(tasks)) if len(tasks) == 1 else None)
    needed = {name: MIN_PER_CLASS - n for name, n in (("not_faithful", counts.not_faithful),
                                                       ("faithful", counts.faithful)) if n < MIN_PER_CLASS}
    if needed:
        return LabelsSection(scope, counts, Refit("not_enough_labels", target_far, target_frr, in_force,
                                                  needed=needed))
    summary = evaluate(rows, verifier, file=f"request log, scope {scope}")
    labels, scores = zip(*summary.scored, strict=True)
    refit = thresholds_for_targets(labels, scores, target_far=target_far, target_frr=target_frr)
    status: RefitStatus = "unchanged" if _pair(refit) == _pair(in_force) else "would_change"
    return LabelsSection(scope, counts, Refit(status, target_far, target_frr, in_force, refit=refit,
                                              rates_in_force=summary.routing["all"],
                                              rates_refit=cross_validated_rates(labels, scores, target_far=target_far,
                                                                                target_frr=target_frr),
                                              unchecked=len(summary.errors)))


def cross_validated_rates(hallucinated: Sequence[bool], scores: Sequence[float], *, target_far: float,
                          target_frr: float, folds: int = FOLDS) -> RoutingRates:
    """The rates refitting gives on answers it did not see: each answer is routed (by score) at the thresholds fitted
    on the other folds. Folds are stratified (each class dealt round-robin in order), so every fold fits on both."""
    y = np.asarray(hallucinated, dtype=bool)
    s = np.asarray(scores, dtype=float)
    fold = np.empty(len(y), dtype=int)
    for members in (np.flatnonzero(y), np.flatnonzero(~y)):
        fold[members] = np.arange(len(members)) % folds
    accepted = np.zeros(len(y), dtype=bool)
    rejected = np.zeros(len(y), dtype=bool)
    for k in range(folds):
        held = fold == k
        accept_at, reject_at = thresholds_for_targets(y[~held], s[~held], target_far=target_far, target_frr=target_frr)
        accepted[held] = s[held] >= accept_at
        rejected[held] = ~accepted[held] & (s[held] <= reject_at)
    return rates_of_routes(list(hallucinated), accepted, rejected)


def labels_html(section: dict[str, Any]) -> str:
    """The section in the eval-loop report (from `LabelsSection.to_dict()`, as the result carries it)."""
    counts, refit = section["counts"], section["refit"]
    rows = "".join(f"<tr><td>{html.escape(str(name))}</td><td>{value}</td></tr>" for name, value in (
        ("labelled", counts["labelled"]), ("not faithful", counts["not_faithful"]),
        ("with claims marked", counts["claim_marked"]), ("faithful", counts["faithful"]),
        ("make no row", counts["unreadable"])))
    status = html.escape(str(refit["status"]).replace("_", " "))
    change = f"{_pair(refit['in_force'])}" + (f" &rarr; {_pair(refit['refit'])}" if refit["refit"] else "")
    return (f"<h2>Reviewers' labels: scope {html.escape(section['scope'])}</h2><table>{rows}</table>"
            f"<p>Refit at false accept {refit['target_far']:g}, false reject {refit['target_frr']:g}: "
            f"<strong>{status}</strong> (accept_at, reject_at {change}).</p>")


def _pair(pair: Any) -> str:
    accept_at, reject_at = pair
    return f"accept_at {accept_at:.4f} / reject_at {reject_at:.4f}"


def _rates(rates: RoutingRates) -> str:
    def share(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    return (f"false accept {share(rates.false_accept)}, false reject {share(rates.false_reject)}, "
            f"escalated {share(rates.escalated)}")
