"""The eval loop: quality metrics over a frozen set and a rolling sample of the request log.

Metrics, overall and per release and per segment:
- faithfulness: mean share of SUPPORTED claims per answered (non-refused) answer with claims
- grounded_rate: share of answered answers whose claims are all SUPPORTED
- refusal_rate, escalation_rate: share of answers refused / with any claim sent to escalation
- retrieval_hit_rate: share of answers whose gold passage was retrieved (only where gold is known)
- claim_density: concrete claims per answered answer; non_answer_rate: answered answers with none
  (hedged non-answers score perfect faithfulness, so they are caught here instead)
- thumbs_down_rate: share of answers with feedback that got a thumbs down or a correction (log only)

Failures (an unsupported claim, or a gold "hallucinated" label) are split by one question: was the
supporting evidence in the retrieved set? With gold ids the answer is direct. Otherwise the failed
claims are checked against the rest of the corpus (the nearest passages by embedding, then the
verifier): when every one of them is supported outside the retrieved set, it is a retrieval miss;
when any has no evidence anywhere, the generator made it up: generator drift. With no corpus to
look in, or when the verifier found no unsupported claim in an answer the gold label calls
hallucinated (a missed detection), the failure stays undetermined.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from groundwire.core.cancel import Cancelled, checkpoint
from groundwire.data.embed import best_similarity, index_texts
from groundwire.evaluation.charts import line_chart, svg_block
from groundwire.evaluation.metrics import detection_metrics
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.textutil import content_words
from groundwire.foundation.types import Chunk, Route, Verdict
from groundwire.pipeline import CheckItem, check, check_many, failure_of
from groundwire.scoring.embedder import default_embedder

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.core.plan import Plan
    from groundwire.core.verifier import Verifier
    from groundwire.data.embed import WindowIndex
    from groundwire.data.rows import EvalRow
    from groundwire.data.store import ClaimLog, FeedbackSummary, RequestRecord, Store
    from groundwire.scoring.embedder import Embedder

RETRIEVAL_MISS, GENERATOR_DRIFT, UNDETERMINED = "retrieval_miss", "generator_drift", "undetermined"
NONE_LABEL = "(none)"
_HEDGE_RE = re.compile(
    r"\b(?:may|might|could|possibly|perhaps|probably|likely|generally|typically|usually|often|sometimes|"
    r"it depends|depending on|not sure|unsure|unclear|i think|i believe|consult|contact (?:support|your)|"
    r"varies|vary|in some cases|can be)\b",
    re.IGNORECASE,
)
_DIGIT_RE = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class LoggedClaim:
    text: str
    verdict: str
    score: float


@dataclass(frozen=True, slots=True)
class EvalItem:
    """One answer under evaluation, from the frozen set or the request log (`origin` says which)."""

    id: str
    origin: str
    answer: str
    claims: tuple[LoggedClaim, ...]
    refused: bool
    escalated: bool
    retrieved_ids: tuple[str, ...] = ()
    gold_ids: tuple[str, ...] | None = None
    hallucinated: bool | None = None
    """The gold label, where one exists (frozen set)."""
    score: float | None = None
    route: str | None = None
    """The answer-level decision (accept / escalate / reject)."""
    release: str | None = None
    segment: str | None = None
    scope: str | None = None
    created_at: datetime | None = None
    failure: str | None = None
    """None (not a failure), RETRIEVAL_MISS, GENERATOR_DRIFT or UNDETERMINED."""
    thumbs_down: bool | None = None
    """Whether a person gave the answer a thumbs down (or sent a correction); None without feedback."""

    @property
    def failed(self) -> bool:
        if self.refused:
            return False
        if self.hallucinated is not None:
            return self.hallucinated
        return any(c.verdict != Verdict.SUPPORTED.value for c in self.claims)

    @property
    def unsupported_claims(self) -> tuple[str, ...]:
        return tuple(c.text for c in self.claims if c.verdict != Verdict.SUPPORTED.value)


def is_concrete(claim: str) -> bool:
    """A claim that commits to something: no hedge cue, and some content (a figure or a content word).

    Short answers count ("Arthur's Magazine." is concrete): an earlier rule that asked for three content
    words called 38% of HaluEval's correct short answers non-answers.
    """
    if _HEDGE_RE.search(claim):
        return False
    return bool(_DIGIT_RE.search(claim)) or bool(content_words(claim))


# --- building items ---------------------------------------------------------------------------------------


def items_from_frozen(
    rows: Sequence[EvalRow],
    verifier: Verifier,
    *,
    release: str | None = None,
    segment_by: Callable[[EvalRow], str | None] = lambda row: row.source,
    on_row: Callable[[], None] | None = None,
) -> list[EvalItem]:
    """Verify every frozen-set answer against its own context (chunks S1, S2...) with today's verifier, through
    `pipeline.check_many`; `on_row` is called after each (a progress bar). A row the verifier refuses stops the
    run with its InputError: a frozen set is curated, so it is fixed rather than skipped."""
    items: list[EvalItem] = []
    checks = (
        CheckItem(
            row.answer,
            [Chunk(id=f"S{i}", text=text, doc_id=row.id) for i, text in enumerate(row.context, start=1)],
            question=row.question,
        )
        for row in rows
    )
    for row, checked in zip(rows, check_many(verifier, checks), strict=True):
        if checked.report is None:
            cause = (checked.code or ErrorCode.INTERNAL_ERROR).value
            raise InputError(f"frozen row {row.id!r} could not be checked ({cause}): {checked.error}",
                             code=ErrorCode.INVALID_ROW)
        report = checked.report
        claims = tuple(LoggedClaim(r.claim.text, Verdict(r.verdict).value, float(r.score)) for r in report.claims)
        items.append(
            EvalItem(
                id=row.id,
                origin="frozen",
                answer=row.answer,
                claims=claims,
                refused=bool(report.abstained),
                escalated=report.decision is Route.ESCALATE or any(r.route is Route.ESCALATE for r in report.claims),
                retrieved_ids=tuple(text_id(text) for text in row.context),
                hallucinated=row.hallucinated,
                score=float(report.score),
                route=Route(report.decision).value,
                release=release,
                segment=segment_by(row),
            )
        )
        if on_row is not None:
            on_row()
    return items


def items_from_log(
    records: Iterable[RequestRecord], *, feedback: Mapping[str, FeedbackSummary] | None = None
) -> list[EvalItem]:
    """Items from logged requests, using the verdicts logged at the time (no model is re-run)."""
    feedback = feedback or {}
    return [
        EvalItem(
            id=record.id or "",
            origin="log",
            answer=record.response,
            claims=tuple(_logged(c) for c in record.claims),
            refused=record.refused,
            escalated=record.escalations > 0 or record.route == Route.ESCALATE.value,
            retrieved_ids=tuple(r.cite_id for r in record.retrieved),
            gold_ids=record.gold_ids,
            score=record.answer_score,
            route=record.route,
            release=record.release,
            segment=record.segment,
            scope=record.scope,
            created_at=record.created_at,
            thumbs_down=_thumbs_down(feedback.get(record.id or "")),
        )
        for record in records
    ]


def _thumbs_down(summary: FeedbackSummary | None) -> bool | None:
    return None if summary is None else bool(summary.down or summary.corrections)


def _logged(claim: ClaimLog) -> LoggedClaim:
    return LoggedClaim(claim.text, claim.verdict, claim.score)


# --- failure partition ------------------------------------------------------------------------------------


class NotChecked(Exception):
    """A failure's evidence check that the run's `EvidenceBudget` does not allow: the failure stays undetermined."""


@dataclass(slots=True)
class EvidenceBudget:
    """The work the failure partition may do in one run (the service's bound on one eval call). The corpus a
    scope's failures are looked up in is embedded whole, so it may hold at most `corpus_chars` characters. Each
    evidence check (one unsupported claim against its nearest corpus chunks) is planned before it is scored and may
    hold at most `per_check` (claim, window) pairs and `max_claims` claims; all of them together at most `total`
    pairs. A failure not checked for any of these reasons stays undetermined and is counted here: `meta` says how
    many and why; none is left out silently. Pairs are the first stage's (a cascade's later stage scores the claims
    it escalates once more). The setting names in `meta`'s reason are the service's."""

    total: int
    per_check: int
    max_claims: int | None = None
    corpus_chars: int | None = None
    spent: int = 0
    """Pairs planned by the evidence checks that ran."""
    over_corpus: int = 0
    """Failures left undetermined because their scope's corpus was over `corpus_chars`."""
    largest_corpus: int = 0
    """The largest corpus refused, in characters."""
    over_check: int = 0
    """Failures left undetermined because one of their evidence checks was over `per_check` or `max_claims`."""
    over_total: int = 0
    """Failures left undetermined because an evidence check of theirs did not fit in what was left of `total`."""
    over_time: int = 0
    """Failures left undetermined because the call's time was up (core.cancel: the service's time budget)."""

    def index(self, corpus: Sequence[Chunk]) -> None:
        """NotChecked (counted) when `corpus` is over `corpus_chars`."""
        chars = sum(len(chunk.text) for chunk in corpus)
        if self.corpus_chars is not None and chars > self.corpus_chars:
            self.over_corpus += 1
            self.largest_corpus = max(self.largest_corpus, chars)
            raise NotChecked(f"a corpus of {chars} characters, over the limit of {self.corpus_chars}")

    def plan(self, verifier: Verifier, claim: str, chunks: Sequence[Chunk]) -> Plan:
        """The evidence check's plan, its pairs spent; NotChecked (counted) when it is over a limit."""
        self.require_left()
        plan = verifier.plan(claim, chunks, max_claims=self.max_claims)
        pairs = plan.workload.pairs
        if not plan.complete or pairs > self.per_check:
            self.over_check += 1
            raise NotChecked(f"{plan.workload.claims} claims and {pairs} pairs, over the limits of {self.max_claims} "
                             f"and {self.per_check} per evidence check")
        if self.spent + pairs > self.total:  # a smaller check after it may still fit
            self.over_total += 1
            raise NotChecked(f"{pairs} pairs, more than the {self.total - self.spent} left of the run's {self.total}")
        self.spent += pairs
        return plan

    def require_left(self) -> None:
        """NotChecked (counted) when the run's pairs are spent."""
        if self.spent >= self.total:
            self.over_total += 1
            raise NotChecked(f"the run's {self.total} pairs are spent")

    def meta(self) -> dict[str, Any]:
        """The limits, the pairs spent, and the failures not checked against the corpus and why."""
        reasons = []
        if self.over_corpus:
            reasons.append(f"{self.over_corpus} because the corpus they are looked up in holds {self.largest_corpus} "
                           f"characters, over the limit of {self.corpus_chars} (eval_max_corpus_chars)")
        if self.over_check:
            reasons.append(f"{self.over_check} because an evidence check of theirs was over {self.per_check} (claim, "
                           f"window) pairs (max_pairs)" + (f" or {self.max_claims} claims" if self.max_claims else ""))
        if self.over_total:
            reasons.append(f"{self.over_total} because an evidence check of theirs did not fit in what was left of "
                           f"the {self.total} pairs one call may score (eval_max_pairs)")
        if self.over_time:
            reasons.append(f"{self.over_time} because the call's time budget ran out first (time_budget_s)")
        not_checked = self.over_corpus + self.over_check + self.over_total + self.over_time
        return {
            "max_pairs": self.total,
            "max_pairs_per_check": self.per_check,
            "max_corpus_chars": self.corpus_chars,
            "pairs": self.spent,
            "failures_not_checked": not_checked,
            "failures_not_checked_for_time": self.over_time,
            "reason": None if not not_checked else (
                f"{not_checked} failure(s) were not checked against the corpus and count as undetermined: "
                + "; ".join(reasons) + "."),
        }


class EvidenceFinder:
    """Answers "is there support for this claim outside the retrieved set?" over a corpus of chunks.

    The nearest `top_k` corpus chunks by embedding that were not retrieved are verified against the
    claim; evidence counts when the verifier calls the claim SUPPORTED on them. With a `budget`, each of these
    checks is planned and spent from it first, and one it does not allow raises NotChecked.
    """

    def __init__(
        self,
        corpus: Sequence[Chunk],
        verifier: Verifier,
        *,
        embedder: Embedder | None = None,
        top_k: int = 3,
        budget: EvidenceBudget | None = None,
    ) -> None:
        self._corpus = list(corpus)
        self._verifier = verifier
        self._embedder = embedder if embedder is not None else default_embedder()
        self._top_k = top_k
        self._budget = budget
        self._index: WindowIndex | None = None  # built on the first failure: a clean sample never pays for it

    def supported_outside(self, claims: Sequence[str], retrieved_ids: Sequence[str]) -> bool:
        """True when every claim is supported by some corpus chunk outside the retrieved set. With a `budget`, a
        call whose time is up (core.cancel's deadline) raises NotChecked, counted there, at its next checkpoint."""
        if not self._corpus or not claims:
            return False
        try:
            checkpoint()
            return self._supported_outside(claims, retrieved_ids)
        except Cancelled as stop:
            if stop.reason != "deadline" or self._budget is None:
                raise
            self._budget.over_time += 1
            raise NotChecked("the call's time budget ran out") from None

    def _supported_outside(self, claims: Sequence[str], retrieved_ids: Sequence[str]) -> bool:
        if self._budget is not None:  # a corpus over the limit, or a spent budget, costs no embedding
            self._budget.index(self._corpus)
            self._budget.require_left()
        if self._index is None:
            self._index = index_texts(self._embedder, [c.text for c in self._corpus])
        retrieved = set(retrieved_ids)
        outside = np.array([i for i, c in enumerate(self._corpus) if c.id not in retrieved], dtype=np.int64)
        if not len(outside):
            return False
        similarity = best_similarity(self._index, self._embedder.embed(list(claims)))[:, outside]
        for row, claim in enumerate(claims):
            nearest = [self._corpus[outside[i]] for i in similarity[row].argsort()[::-1][: self._top_k]]
            plan = None if self._budget is None else self._budget.plan(self._verifier, claim, nearest)
            report = check(self._verifier, CheckItem(claim, nearest), plan=plan)
            if not report.claims or any(r.verdict is not Verdict.SUPPORTED for r in report.claims):
                return False  # this claim has no evidence anywhere: the generator made it up
        return True


def partition_failures(items: Sequence[EvalItem], *, finder: EvidenceFinder | None = None) -> list[EvalItem]:
    """Label each failed item RETRIEVAL_MISS, GENERATOR_DRIFT or UNDETERMINED (see the module docstring)."""
    out: list[EvalItem] = []
    for item in items:
        if not item.failed:
            out.append(replace(item, failure=None))
        elif item.gold_ids:
            hit = bool(set(item.gold_ids) & set(item.retrieved_ids))
            out.append(replace(item, failure=GENERATOR_DRIFT if hit else RETRIEVAL_MISS))
        elif finder is not None and item.unsupported_claims:
            try:
                outside = finder.supported_outside(item.unsupported_claims, item.retrieved_ids)
            except NotChecked:  # over the run's budget: counted there, and said in the run's meta
                out.append(replace(item, failure=UNDETERMINED))
                continue
            except Exception as error:  # one logged answer never ends the eval loop (or a GET /v1/eval)
                failure_of(error)  # logged, with its traceback when unexpected
                out.append(replace(item, failure=UNDETERMINED))
                continue
            out.append(replace(item, failure=RETRIEVAL_MISS if outside else GENERATOR_DRIFT))
        else:
            out.append(replace(item, failure=UNDETERMINED))
    return out


# --- metrics ----------------------------------------------------------------------------------------------


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


# --- one run ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EvalLoopResult:
    frozen: dict[str, Any] | None
    rolling: dict[str, Any] | None
    history: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"meta": self.meta, "frozen": self.frozen, "rolling": self.rolling, "history": self.history}


def run_eval_loop(
    *,
    verifier: Verifier,
    frozen_rows: Sequence[EvalRow] = (),
    store: Store | None = None,
    scope: str | None = None,
    sample_size: int = 500,
    since: datetime | None = None,
    seed: int = 0,
    release: str | None = None,
    embedder: Embedder | None = None,
    corpus_check: bool = True,
    save: bool = True,
    on_row: Callable[[], None] | None = None,
    budget: EvidenceBudget | None = None,
) -> EvalLoopResult:
    """Evaluate the frozen set and a rolling sample of the log; record the run in the store's history.

    The frozen set's corpus for the failure partition is every context chunk in the set (another row's
    context can hold the evidence a row was missing); the log's is the scope's ingested passages.
    `budget`: what the log's failure partition may score (the service's bound on one call; meta["evidence"]
    then says what it spent and how many failures it left unchecked, and why); None: no bound.
    """
    frozen = rolling = None
    meta: dict[str, Any] = {"generated_at": datetime.now().astimezone().isoformat(), "release": release, "scope": scope}
    if frozen_rows:
        items = items_from_frozen(frozen_rows, verifier, release=release, on_row=on_row)
        finder = None
        if corpus_check:
            corpus = {text_id(t): Chunk(id=text_id(t), text=t) for row in frozen_rows for t in row.context}
            finder = EvidenceFinder(list(corpus.values()), verifier, embedder=embedder)
        frozen = summarise(partition_failures(items, finder=finder))
        meta["frozen_rows"] = len(frozen_rows)
    if store is not None:
        records = store.sample_requests(scope=scope, n=sample_size, seed=seed, since=since)
        items = items_from_log(records, feedback=store.feedback_summary([r.id for r in records if r.id], scope=scope))
        items = (partition_by_scope(items, store, verifier, embedder, budget=budget) if corpus_check
                 else partition_failures(items))
        rolling = summarise(items, by_day=True)
        meta["sample_size"] = len(records)
        if budget is not None:
            meta["evidence"] = budget.meta()
    history: list[dict[str, Any]] = []
    if store is not None:
        summary = {"frozen": frozen["overall"] if frozen else None, "rolling": rolling["overall"] if rolling else None}
        if save:
            store.save_eval_run(summary, scope=scope, release=release)
        history = store.eval_runs(scope=scope)
    return EvalLoopResult(frozen, rolling, history, meta)


def partition_by_scope(
    items: Sequence[EvalItem],
    store: Store,
    verifier: Verifier,
    embedder: Embedder | None,
    *,
    budget: EvidenceBudget | None = None,
) -> list[EvalItem]:
    """Partition logged failures, checking each item against its own scope's corpus only (within `budget`)."""
    out: list[EvalItem] = []
    by_scope: dict[str | None, list[EvalItem]] = defaultdict(list)
    for item in items:
        by_scope[item.scope].append(item)
    for scope, group in by_scope.items():
        needs_corpus = any(i.failed and not i.gold_ids for i in group)
        corpus = [p.as_chunk() for p in store.passages(scope=scope)] if scope and needs_corpus else []
        finder = EvidenceFinder(corpus, verifier, embedder=embedder, budget=budget) if corpus else None
        out.extend(partition_failures(group, finder=finder))
    return out


def text_id(text: str) -> str:
    """A frozen-set chunk's id: rows that share a passage share its id."""
    return "t_" + hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


# --- HTML report ------------------------------------------------------------------------------------------

_PLOTTED = (
    "faithfulness",
    "grounded_rate",
    "refusal_rate",
    "escalation_rate",
    "retrieval_hit_rate",
    "non_answer_rate",
    "thumbs_down_rate",
)


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:1100px}"
    "table{border-collapse:collapse;margin:1rem 0;font-size:.85rem}"
    "td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}"
    "th:first-child,td:first-child,td.text{text-align:left}"
    "figure{margin:.5rem 0}figure svg{max-width:100%;height:auto;background:#fafafa;border:1px solid #ddd}"
)
_NO_CLAIM = "(the verifier found no unsupported claim)"


def render_html(result: EvalLoopResult) -> str:
    """A self-contained page: line charts over time (inline SVG drawn by matplotlib, see charts.py), then
    tables per release and segment."""
    meta = {key: html.escape(str(result.meta.get(key) or "")) for key in ("generated_at", "release", "scope")}
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>groundwire eval loop</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>groundwire eval loop</h1>",
        f"<p>Generated {meta['generated_at']}; release {meta['release'] or 'none'}; "
        f"scope {meta['scope'] or 'all'}.</p>",
    ]
    not_checked = (result.meta.get("evidence") or {}).get("reason")
    if not_checked:  # the run's budget left failures unchecked: said where the figures are read
        parts.append(f"<p><strong>Not every failure was checked:</strong> {html.escape(not_checked)}</p>")
    if result.rolling and result.rolling.get("by_day"):
        parts.append("<h2>Request log: metrics by day</h2>")
        parts.append(_chart(_series(result.rolling["by_day"]), title="rolling sample, by day"))
        parts.append(_claim_density_chart(result.rolling["by_day"]))
    for kind, heading in (("frozen", "Frozen set"), ("rolling", "Rolling sample")):
        runs = {_run_label(run): run["metrics"].get(kind) or {} for run in result.history}
        if any(runs.values()):
            parts.append(f"<h2>{heading}: metrics over eval runs</h2>")
            parts.append(_chart(_series(runs), title=f"{heading.lower()}, per eval run"))
    for name, section in (("Frozen set", result.frozen), ("Rolling sample of the request log", result.rolling)):
        if not section:
            continue
        parts.append(f"<h2>{name}</h2>")
        parts.append(_table({"overall": section["overall"]}, "all"))
        parts.append("<h3>Per release</h3>" + _table(section["by_release"], "release"))
        parts.append("<h3>Per segment</h3>" + _table(section["by_segment"], "segment"))
        if section.get("detection"):
            parts.append("<h3>Detection against gold labels</h3>" + _table({"all": section["detection"]}, ""))
        if section["failure_examples"]:
            rows = "".join(
                f"<tr><td>{html.escape(e['id'])}</td><td>{html.escape(str(e['failure']))}</td>"
                f"<td class='text'>{html.escape(' | '.join(e['unsupported']) or _NO_CLAIM)}</td></tr>"
                for e in section["failure_examples"]
            )
            parts.append(
                f"<h3>Failures</h3><table><tr><th>id</th><th>kind</th><th>unsupported claims</th></tr>{rows}</table>"
            )
    parts.append("</body></html>")
    return "\n".join(parts)


def _run_label(run: Mapping[str, Any]) -> str:
    return f"#{run['id']} {str(run['created_at'])[:10]} {run.get('release') or ''}".strip()


def _series(points: Mapping[str, Mapping[str, Any]]) -> dict[str, list[tuple[str, float | None]]]:
    return {metric: [(label, values.get(metric)) for label, values in points.items()] for metric in _PLOTTED}


def _chart(series: Mapping[str, Sequence[tuple[str, float | None]]], *, title: str, y_max: float | None = 1.0) -> str:
    return svg_block(line_chart(series, title=title, y_max=y_max), label=title)


def _claim_density_chart(by_day: Mapping[str, Mapping[str, Any]]) -> str:
    return _chart(
        {"claim_density": [(day, m.get("claim_density")) for day, m in by_day.items()]},
        title="concrete claims per answer",
        y_max=None,
    )


def _table(groups: Mapping[str, Mapping[str, Any]], label: str) -> str:
    if not groups:
        return "<p>none</p>"
    columns = [k for k in next(iter(groups.values())) if k != "failures"]
    has_failures = any("failures" in m for m in groups.values())
    head = "".join(f"<th>{html.escape(c)}</th>" for c in [label, *columns]) + (
        "<th>miss / drift / undetermined</th>" if has_failures else ""
    )
    rows = []
    for name, m in groups.items():
        cells = "".join(f"<td>{_fmt(m.get(c))}</td>" for c in columns)
        if has_failures:
            f = m.get("failures") or {}
            cells += f"<td>{f.get(RETRIEVAL_MISS, 0)} / {f.get(GENERATOR_DRIFT, 0)} / {f.get(UNDETERMINED, 0)}</td>"
        rows.append(f"<tr><td>{html.escape(name)}</td>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _fmt(value: Any) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, float):
        return f"{value:.3f}"
    return html.escape(str(value))
