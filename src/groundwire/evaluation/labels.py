"""The eval loop's labels section: how many of a scope's answers reviewers have labelled, and what `groundwire adapt
--from-log DB --scope S` would make of them.

This module counts the labels (`count_labels`, over `data.labelled.read_reviewed`'s rows) and holds and shows the
section; it fits nothing. The refit is adapt's own (`groundwire.calibration.refit` runs `calibration.adapt` on the
same rows and fills a `Refit`): the profile it would write, with its cross-validated rates, or the refusal adapt
would give, with how many more labels of each class it needs. One fit, so the eval loop never reports thresholds
`adapt` would not write. It is only reported, never written: `Refit.command` is the command that writes it.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from groundwire.data.rows import EvalRow, RowError
from groundwire.foundation.types import Thresholds

RefitStatus = Literal["refused", "unchanged", "would_change", "not_computed"]
"""refused: adapt would refuse these labels (`Refit.refusal`); unchanged / would_change: the profile adapt would write
routes these labels' tasks by the thresholds in force, or not; not_computed: the refit was not run (`Refit.refusal`
says why, e.g. the service's time budget)."""
POOLED = "all"
"""The key of the pooled pair (an answer of a task without thresholds of its own) in `Refit.in_force` and
`Refit.thresholds`."""


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
    by_task: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per task (as the request named it, else unknown): {"not_faithful": n, "faithful": n}."""
    judge: dict[str, int] = field(default_factory=lambda: {"labelled": 0, "not_faithful": 0, "faithful": 0})
    """The LLM judge's labels of the scope (`serve --judge-labels`), counted apart: never in the counts above, nor in
    the refit shown (adapt's default, `--labels human`)."""


def count_judge_labels(faithful: Sequence[bool]) -> dict[str, int]:
    """The judge's labels of a scope (each one's faithful flag), as LabelCounts.judge counts them."""
    bad = sum(not f for f in faithful)
    return {"labelled": len(faithful), "not_faithful": bad, "faithful": len(faithful) - bad}


def count_labels(rows: Sequence[EvalRow | RowError]) -> LabelCounts:
    """The labels of a scope's reviewed rows (`read_reviewed`), per class and per task and class."""
    readable = [row for row in rows if isinstance(row, EvalRow)]
    by_task: dict[str, Counter[str]] = {}
    for row in readable:
        by_task.setdefault(row.task, Counter())["not_faithful" if row.hallucinated else "faithful"] += 1
    not_faithful = sum(bool(row.hallucinated) for row in readable)
    return LabelCounts(labelled=len(readable), not_faithful=not_faithful, faithful=len(readable) - not_faithful,
                       claim_marked=sum(bool(row.spans) for row in readable),
                       unreadable=len(rows) - len(readable),
                       by_task={task: {name: tally[name] for name in ("not_faithful", "faithful")}
                                for task, tally in sorted(by_task.items())})


@dataclass(frozen=True, slots=True)
class Refit:
    """What `groundwire adapt --from-log DB --scope S` would do with the scope's labels (calibration.refit fills it)."""

    status: RefitStatus
    command: str
    """The command that writes this profile (or is refused as reported)."""
    targets: Mapping[str, float]
    """adapt's targets: false_accept, false_reject, confidence."""
    in_force: Mapping[str, Thresholds]
    """(accept_at, reject_at) the scope's answers are routed by now: POOLED and each labelled task's."""
    thresholds: Mapping[str, Thresholds] | None = None
    """The same keys' pairs in the profile adapt would write."""
    combiner_changes: bool = False
    """The profile refits the combiner (its claim scores differ from those in force)."""
    profile: Mapping[str, Any] | None = None
    """The profile.json adapt would write: its labels per task and class, and its cross-validated rates with 95%
    intervals beside the shipped routing's."""
    refusal: Mapping[str, str] | None = None
    """{"code", "message"}: adapt's refusal (status refused), or why no refit was run (not_computed)."""
    needed: Mapping[str, int] = field(default_factory=dict)
    """More labelled answers (with a checkable claim) of each class, hallucinated and faithful, adapt needs: to fit
    at all (refused), or to fit the threshold a one-sided refit keeps at the base model's."""

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "command": self.command, "targets": dict(self.targets),
                "in_force": {key: list(pair) for key, pair in self.in_force.items()},
                "thresholds": None if self.thresholds is None else {key: list(pair)
                                                                    for key, pair in self.thresholds.items()},
                "combiner_changes": self.combiner_changes, "profile": self.profile,
                "refusal": None if self.refusal is None else dict(self.refusal), "needed": dict(self.needed)}


@dataclass(frozen=True, slots=True)
class LabelsSection:
    scope: str
    counts: LabelCounts
    refit: Refit

    def to_dict(self) -> dict[str, Any]:
        c = self.counts
        return {
            "scope": self.scope,
            "counts": {"labelled": c.labelled, "not_faithful": c.not_faithful, "faithful": c.faithful,
                       "claim_marked": c.claim_marked, "unreadable": c.unreadable,
                       "by_task": {task: dict(tally) for task, tally in c.by_task.items()}, "judge": dict(c.judge)},
            "refit": self.refit.to_dict(),
        }

    def lines(self) -> list[str]:
        """What the command prints: the count, then what a refit would do (from `to_dict`, as the page shows it)."""
        return section_lines(self.to_dict())


def section_lines(section: Mapping[str, Any]) -> list[str]:
    """The section as lines of plain text: the CLI prints them, the HTML report and the service's page show the same."""
    c, r = section["counts"], section["refit"]
    tasks = "; ".join(f"{task}: {t['not_faithful']} not faithful / {t['faithful']} faithful"
                      for task, t in c["by_task"].items())
    out = [f"labels ({section['scope']}): {c['labelled']} reviewed answers, {c['not_faithful']} not faithful "
           f"({c['claim_marked']} with claims marked), {c['faithful']} faithful"
           + (f"; {c['unreadable']} reviewed requests make no row" if c["unreadable"] else "")
           + (f" ({tasks})" if tasks else "")]
    judge = c.get("judge") or {}
    if judge.get("labelled"):
        out.append(f"judge labels (counted apart, not in this refit): {judge['labelled']}, {judge['not_faithful']} not "
                   f"faithful, {judge['faithful']} faithful")
    targets = r["targets"]
    head = (f"refit (as groundwire adapt, false accept {targets['false_accept']:g}, false reject "
            f"{targets['false_reject']:g}, confidence {targets['confidence']:g})")
    in_force = r["in_force"]
    if r["status"] in ("refused", "not_computed"):
        refusal = r["refusal"] or {}
        verb = "refused" if r["status"] == "refused" else "not computed"
        out.append(f"{head}: {verb} ({refusal.get('code', '')}): {refusal.get('message', '')}")
        if r["needed"]:
            out.append("  needs " + " and ".join(f"{n} more {name}" for name, n in r["needed"].items())
                       + " labelled answers with a checkable claim")
        out.append(f"  thresholds in force: {_pairs(in_force)}")
        return out
    refit = r["thresholds"] or {}
    if r["status"] == "unchanged":
        out.append(f"{head}: unchanged, {_pairs(in_force)}")
    else:
        moved = [f"{key} {_pair(in_force[key])} -> {_pair(refit[key])}" for key in in_force
                 if list(in_force[key]) != list(refit[key])]
        out.append(f"{head}: would change the thresholds in force: " + ("; ".join(moved) or "none")
                   + ("; and refits the combiner" if r["combiner_changes"] else ""))
    if r["needed"]:  # a one-sided refit (calibration.sides): the other threshold stays the base model's
        out.append("  one-sided: the other threshold stays the base model's until "
                   + " and ".join(f"{n} more {name}" for name, n in r["needed"].items())
                   + " labelled answers with a checkable claim")
    validation = (r["profile"] or {}).get("validation") or {}
    if validation:
        out.append(f"  cross-validated within the labels ({validation.get('folds')} folds by source document): "
                   f"refit {_rates(validation['profile'])}; shipped routing {_rates(validation['shipped'])}")
    if r["status"] == "would_change":
        out.append(f"  to write it: {r['command']}")
    return out


def labels_html(section: Mapping[str, Any]) -> str:
    """The section in the eval-loop report (from `LabelsSection.to_dict()`, as the result carries it); every text
    escaped."""
    counts = section["counts"]
    rows = "".join(f"<tr><td>{html.escape(str(task))}</td><td>{t['not_faithful']}</td><td>{t['faithful']}</td></tr>"
                   for task, t in counts["by_task"].items())
    lines = section_lines(section)
    return (f"<h2>Reviewers' labels: scope {html.escape(str(section['scope']))}</h2>"
            f"<table><tr><th>task</th><th>not faithful</th><th>faithful</th></tr>{rows}</table>"
            + "".join(f"<p>{html.escape(line)}</p>" for line in lines))


def _pair(pair: Sequence[float]) -> str:
    accept_at, reject_at = pair
    return f"{accept_at:.4f}/{reject_at:.4f}"


def _pairs(pairs: Mapping[str, Sequence[float]]) -> str:
    return "; ".join(f"{key} {_pair(pair)}" for key, pair in pairs.items()) + " (accept_at/reject_at)"


def _rates(rates: Mapping[str, Mapping[str, Any]]) -> str:
    def share(name: str) -> str:
        value = rates[name]["value"]
        return "n/a" if value is None else f"{value:.3f}"

    return (f"false accept {share('false_accept')}, false reject {share('false_reject')}, "
            f"escalated {share('escalated')}")
