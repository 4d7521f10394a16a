"""The failure partition: was a failed answer's evidence in its retrieved set? With gold ids the answer is direct.
Otherwise the failed claims are checked against the rest of the corpus (the nearest passages by embedding, then the
verifier): when every one of them is supported outside the retrieved set, it is a retrieval miss; when any has no
evidence anywhere, the generator made it up: generator drift. With no corpus to look in, or when the verifier found no
unsupported claim in an answer the gold label calls hallucinated (a missed detection), the failure stays undetermined.
The work it may do in one run is bounded by an `EvidenceBudget`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from groundwire.core.cancel import Cancelled, awaited, checkpoint
from groundwire.data.embed import best_similarity, index_texts
from groundwire.evaluation.evalloop.items import GENERATOR_DRIFT, RETRIEVAL_MISS, UNDETERMINED, EvalItem
from groundwire.foundation.types import Chunk, Verdict
from groundwire.pipeline import CheckItem, check, failure_of
from groundwire.scoring.embedder import default_embedder

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.core.plan import Plan
    from groundwire.core.verifier import Verifier
    from groundwire.data.embed import WindowIndex
    from groundwire.data.store import Store
    from groundwire.scoring.embedder import Embedder


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
        self._embedder = embedder
        """None: the shared one, loaded on the first failure (a clean sample never pays for it)."""
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
        # A load longer than the call's time budget stops the call, not the load.
        embedder = self._embedder = self._embedder or awaited(default_embedder)
        if self._index is None:
            self._index = index_texts(embedder, [c.text for c in self._corpus])
        retrieved = set(retrieved_ids)
        outside = np.array([i for i, c in enumerate(self._corpus) if c.id not in retrieved], dtype=np.int64)
        if not len(outside):
            return False
        similarity = best_similarity(self._index, embedder.embed(list(claims)))[:, outside]
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
