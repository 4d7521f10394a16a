"""Issue 56 item 6: a deployment that learns from its reviewers, simulated week by week on a labelled file.

    .venv/bin/python bench/learning_loop.py ../shared/data/dev/halueval_qa_dev.jsonl --cache runs/loop/halueval.jsonl
    .venv/bin/python bench/learning_loop.py FILE.jsonl --cache C --order arrival          # today's queue order
    .venv/bin/python bench/learning_loop.py FILE.jsonl --cache C --labels judge:0.1       # a judge wrong 10% of the time
    .venv/bin/python bench/learning_loop.py FILE.jsonl --cache C --labels judge:0.1 --judge-weight 1
    .venv/bin/python bench/learning_loop.py FILE.jsonl --cache C --labels judge:0.1 --judge-weight 1 --judge-error 0.1 \
        --people-audit          # the service with a judge: it settles every escalation, people label the audit share
    .venv/bin/python bench/learning_loop.py FILE.jsonl --cache C --seeds 5 --weeks 6 --reviews 50
    .venv/bin/python bench/learning_loop.py FILE.jsonl --cache C --seeds 5 --cold-accept 0.6   # an unsafe cold start

The bundled model's claim features of every answer are collected once (`--cache`, reused; the same
`calibration.calibrate.features_for` as `bench/lodo.py`), so the file may be one the project never saw. Then, per
seed, the answers are shuffled by source (whole source documents stay together) and streamed in weeks of
`--per-week` (default min(200, n / 6)). Each week:

1. the week's answers are routed by the profile in force (the shipped calibration in week 1) and the week's rates
   are measured on them, before any of their labels is seen: false accept (hallucinated answers accepted), false
   reject (faithful answers rejected) and escalation, claimless answers escalated as verify() does;
2. the review queue is the week's answers in the service's order (`evaluation.review_order.order_queue`: every
   escalated answer, and the audit share of the others; `--order teach|arrival`), and the first `--reviews` labels
   are revealed (with `--labels judge:P`, each flipped with probability P, as a judge wrong that often would, and
   kept as a label of kind judge weighing `--judge-weight`, as `serve --judge-labels` keeps the judge's: the rows
   the refit reads carry the kind and the weight, `combine.weighted_by_kind`'s). With `--people-audit`, the
   service's case with a judge: the judge settles every escalated answer and keeps its label, and people label the
   audit items, the first `--reviews` of them (`labelled_now`);
3. the scope's profile is refitted on every label so far and guarded exactly as the service does: each label
   weighted by the share of its (week, route) stratum that was reviewed (`calibration.selection`, as
   `serve --learn` weighs the log's), then `calibration.guard.guarded_refit`: it replaces the one in force or is
   refused. The labels of the weeks the profile in force has routed are the answers it was not fitted on (the
   service reads them from each report's profile version).

It prints a line per week (means over seeds), then
    learning: weeks=6 reviews=300 escalation=0.xx far=0.xx frr=0.xx replaced=k refused=m
(with a judge, then `judged=j`, the judge's labels among the reviews) with the rates of the last week's answers
(routed before their labels were seen) and the replacements and refusals summed over the weeks, averaged over seeds.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from groundwire.calibration import combine, lodo
from groundwire.calibration.adapt import (
    DEFAULT_JUDGE_WEIGHT,
    Targets,
    check_judge_error,
    check_judge_weight,
    shipped,
)
from groundwire.calibration.guard import guarded_refit
from groundwire.calibration.recipe import Fitted
from groundwire.calibration.selection import selection_weights, weighted_by_selection
from groundwire.data.labelled import Stratum
from groundwire.evaluation.operating import rates_of_routes
from groundwire.evaluation.review_order import (
    DEFAULT_AUDIT_SHARE,
    Candidate,
    Labelled,
    QueueItem,
    check_order,
    order_queue,
)
from groundwire.scoring.base import Calibration
from groundwire.scoring.onnx import OnnxScorer, bundled_path
from groundwire.train.calibrate import features_for

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Week:
    answers: int
    reviewed: int
    """Labels revealed this week, of either kind."""
    escalation: float
    far: float
    frr: float
    replaced: int
    """Refits this week that replaced the profile in force."""
    refused: int
    judged: int = 0
    """Of the labels revealed, the judge's."""


def judge_noise(spec: str) -> float | None:
    """--labels: "human" (None: a reviewer's labels) or "judge:P", a judge whose verdict is wrong with probability P
    (judge:0 is a judge that is never wrong, its labels still weighing --judge-weight)."""
    if spec == "human":
        return None
    kind, _, share = spec.partition(":")
    if kind != "judge" or not share:
        raise SystemExit(f"--labels takes human or judge:P (e.g. judge:0.1), not {spec!r}")
    return float(share)


def weeks_of(answers: dict[Key, combine.ClaimRow], per_week: int, weeks: int, seed: int) -> list[list[Key]]:
    """The answers in weeks of `per_week`, shuffled by source: a source's answers arrive together."""
    by_source: dict[str, list[Key]] = defaultdict(list)
    for key, row in answers.items():
        by_source[row.group].append(key)
    sources = sorted(by_source)
    random.Random(seed).shuffle(sources)
    stream = [key for source in sources for key in sorted(by_source[source])]
    return [stream[i * per_week:(i + 1) * per_week] for i in range(weeks) if stream[i * per_week:(i + 1) * per_week]]


class Scorer(Protocol):
    """What a refit reads of the scorer the rows came from (an OnnxScorer, or the lexical baseline)."""

    @property
    def model_id(self) -> str: ...

    @property
    def calibration(self) -> Calibration: ...


def labelled_now(queue: Sequence[QueueItem], reviews: int, *, judge_settles: bool) -> list[QueueItem]:
    """The queue items whose labels a week reveals: the first `reviews` in queue order. With `judge_settles`, the
    service's case with a judge (`serve --judge-labels`, every request asking for the judge): the judge settles every
    escalated answer, and keeps its verdict as a label, whatever the reviewers' time; a settled answer leaves the
    band, so people see the audit items alone, the first `reviews` of them."""
    if not judge_settles:
        return list(queue[:reviews])
    return [item for item in queue if item.reason == "audit"][:reviews] + [
        item for item in queue if item.reason == "escalated"]


def run(rows: Sequence[combine.ClaimRow], base: Fitted, scorer: Scorer, *, per_week: int, weeks: int,
        reviews: int, order: str, noise: float | None, seed: int, targets: Targets,
        judge_weight: float = DEFAULT_JUDGE_WEIGHT, judge_error: float = 0.0,
        audit_share: float = DEFAULT_AUDIT_SHARE, people_audit: bool = False, learn_every: int = 0) -> list[Week]:
    """`noise` None: a reviewer's labels; else a judge's, wrong with that probability, weighing `judge_weight`, and
    with `judge_error` the error rate the fit is told to correct for (serve --judge-error); `people_audit`: the
    service's case with a judge (`labelled_now`): the judge labels every escalated answer, people the audit items.
    `learn_every`: refit after every that many labels, as `serve --learn-every` does; 0: once at the end of each
    week."""
    by_answer: dict[Key, list[combine.ClaimRow]] = defaultdict(list)
    for row in rows:
        by_answer[(row.file, row.row_id)].append(row)
    answers = combine.answers_of(rows)
    rng = random.Random(seed + 1)
    in_force, labelled_rows, out = base, [], []
    reviewed_sources: set[str] = set()
    strata: dict[str, Stratum] = {}  # each labelled answer's (week, route): calibration.selection
    traffic: Counter[Stratum] = Counter()
    labels_by_task: Counter[str] = Counter()
    outcomes: list[bool] = []  # this week's refits: replaced or refused
    installed = -1  # the week from which the profile in force routes (-1: the base, fitted on no label)

    def refit(week: int) -> None:
        nonlocal in_force, installed
        # The labels weighted as the service weighs a queue's (learn.logged_claim_rows), then refitted and guarded;
        # the profile in force was fitted on none of the labels of the weeks it routed.
        weighted = weighted_by_selection(labelled_rows, selection_weights(strata, traffic))
        done = guarded_refit(weighted, in_force, base, targets=targets, base_model=scorer.model_id,
                             calibration=scorer.calibration, use="human" if noise is None else "judge",
                             fresh=None if installed < 0 else {
                                 (r.file, r.row_id) for r in labelled_rows if int(strata[r.row_id][0]) >= installed})
        if done.replaces and done.adapted is not None:
            in_force, installed = done.adapted.fitted, week + 1  # it routes from the next week on
        outcomes.append(done.replaces)

    for week, keys in enumerate(weeks_of(answers, per_week, weeks, seed)):
        week_rows = [r for key in keys for r in by_answer[key]]
        routed = lodo.route_by_key(in_force, week_rows)  # before any label of this week is seen
        routes = {key: routed[key].route.value for key in keys}  # verify()'s one routing rule (three-way)
        rates = rates_of_routes([routed[k].hallucinated for k in keys], [routes[k] == "accept" for k in keys],
                                [routes[k] == "reject" for k in keys])
        traffic.update((str(week), routes[key]) for key in keys)
        candidates = [Candidate(id=f"{key[0]}:{key[1]}", arrival=float(week * per_week + i), route=routes[key],
                                task=answers[key].task, source=answers[key].group)
                      for i, key in enumerate(keys)]
        queue = order_queue(candidates, labelled=Labelled(dict(labels_by_task), frozenset(reviewed_sources)),
                            order=check_order(order), audit_share=audit_share)
        key_of = {f"{key[0]}:{key[1]}": key for key in keys}
        revealed = labelled_now(queue, reviews, judge_settles=people_audit and noise is not None)
        judged_now = 0
        for item in revealed:
            key = key_of[item.candidate.id]
            by_judge = noise is not None and not (people_audit and item.reason == "audit")
            flipped = by_judge and rng.random() < (noise or 0.0)
            judged = [key[1]] if by_judge else []
            judged_now += by_judge
            labelled_rows += combine.weighted_by_kind([replace(r, hallucinated=r.hallucinated != flipped)
                                                       for r in by_answer[key]], judged, judge_weight=judge_weight,
                                                      judge_error=judge_error)
            labels_by_task[answers[key].task] += 1
            reviewed_sources.add(answers[key].group)
            strata[key[1]] = (str(week), routes[key])
            if learn_every and len(strata) % learn_every == 0:  # serve --learn-every: a refit every N verdicts
                refit(week)
        if not learn_every:  # a refit at the end of each week
            refit(week)
        out.append(Week(len(keys), len(revealed), rates.escalated, rates.false_accept or 0.0,
                        rates.false_reject or 0.0, sum(outcomes), len(outcomes) - sum(outcomes), judged_now))
        outcomes.clear()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path, help="a labelled grounding-eval JSONL file")
    parser.add_argument("--cache", type=Path, default=None, help="claim-feature cache (JSONL), reused if present")
    parser.add_argument("--bundle", type=Path, default=bundled_path())
    parser.add_argument("--limit", type=int, default=None, help="answers of the file (seeded sample)")
    parser.add_argument("--per-week", type=int, default=None, help="answers a week (default min(200, n / 6))")
    parser.add_argument("--weeks", type=int, default=6)
    parser.add_argument("--reviews", type=int, default=50, help="labels revealed a week, in queue order")
    parser.add_argument("--order", default="teach", help="the review queue's order: teach or arrival")
    parser.add_argument("--labels", default="human", help="human, or judge:P (a judge wrong with probability P)")
    parser.add_argument("--judge-weight", type=float, default=DEFAULT_JUDGE_WEIGHT,
                        help="with --labels judge:P, how much a judge's label counts against a person's (as serve's)")
    parser.add_argument("--judge-error", type=float, default=0.0,
                        help="with --labels judge:P, the error rate the fit corrects for (serve's --judge-error; "
                             "P when the deployment measured its judge exactly)")
    parser.add_argument("--audit-share", type=float, default=DEFAULT_AUDIT_SHARE,
                        help="the share of accepted and rejected answers the queue also holds (serve --review-audit)")
    parser.add_argument("--people-audit", action="store_true",
                        help="with --labels judge:P, the service's case: the judge settles every escalated answer and "
                             "its verdict is kept as a label (serve --judge-labels, every request asking for the "
                             "judge); people label the audit items, up to --reviews a week")
    parser.add_argument("--learn-every", type=int, default=0,
                        help="refit after every N labels, as serve --learn-every (default 0: once a week)")
    parser.add_argument("--cold-accept", type=float, default=None,
                        help="week 1's accept threshold (pooled and per task) instead of the shipped one: a cold start "
                             "unsafe (or strict) for this file, to see how fast the refits mend it")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    noise = judge_noise(args.labels)
    check_judge_weight(args.judge_weight)
    check_judge_error(args.judge_error)
    rows = [r for r in features_for(args.bundle, [args.file], limit=args.limit, cache=args.cache)
            if r.file == args.file.stem]
    if not rows:
        raise SystemExit(f"no claim rows of {args.file.stem} (a --cache of another file?)")
    scorer = OnnxScorer(args.bundle)
    base = shipped(scorer.calibration)
    if args.cold_accept is not None:
        cold = args.cold_accept
        base = replace(base, pooled=(cold, base.pooled[1]), by_key={k: (cold, r) for k, (_, r) in base.by_key.items()})
    n = len(combine.answers_of(rows))
    per_week = args.per_week or min(200, n // 6)
    runs = [run(rows, base, scorer, per_week=per_week, weeks=args.weeks, reviews=args.reviews, order=args.order,
                noise=noise, seed=args.seed + s, targets=Targets(), judge_weight=args.judge_weight,
                judge_error=args.judge_error, audit_share=args.audit_share, people_audit=args.people_audit,
                learn_every=args.learn_every)
            for s in range(args.seeds)]
    print(f"{args.file.name}: {n} answers, {per_week} a week, {args.reviews} reviews a week, order {args.order}, "
          f"labels {args.labels}"
          + (f" (weight {args.judge_weight:g}, error corrected {args.judge_error:g})" if noise is not None else "")
          + f", {args.seeds} seeds (means)")
    print(f"{'week':>4s} {'answers':>7s} {'reviewed':>8s} {'esc':>5s} {'FAR':>5s} {'FRR':>5s} {'replaced':>8s}"
          + (f" {'judged':>6s}" if noise is not None else ""))
    weeks = min(len(r) for r in runs)
    for w in range(weeks):
        cell = [r[w] for r in runs]
        print(f"{w + 1:4d} {statistics.fmean(c.answers for c in cell):7.0f} {statistics.fmean(c.reviewed for c in cell):8.1f} "
              f"{statistics.fmean(c.escalation for c in cell):5.2f} {statistics.fmean(c.far for c in cell):5.2f} "
              f"{statistics.fmean(c.frr for c in cell):5.2f} {statistics.fmean(c.replaced for c in cell):8.2f}"
              + (f" {statistics.fmean(c.judged for c in cell):6.1f}" if noise is not None else ""))
    last = [r[weeks - 1] for r in runs]
    print(f"learning: weeks={weeks} reviews={round(statistics.fmean(sum(c.reviewed for c in r[:weeks]) for r in runs))} "
          f"escalation={statistics.fmean(c.escalation for c in last):.2f} far={statistics.fmean(c.far for c in last):.2f} "
          f"frr={statistics.fmean(c.frr for c in last):.2f} "
          f"replaced={statistics.fmean(sum(c.replaced for c in r[:weeks]) for r in runs):.1f} "
          f"refused={statistics.fmean(sum(c.refused for c in r[:weeks]) for r in runs):.1f}"
          + (f" judged={round(statistics.fmean(sum(c.judged for c in r[:weeks]) for r in runs))}"
             if noise is not None else ""))


if __name__ == "__main__":
    main()
