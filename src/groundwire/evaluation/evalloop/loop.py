"""One run of the eval loop: the frozen set and a rolling sample of the request log, each partitioned and
summarised, and the run recorded in the store's history."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from groundwire.evaluation.evalloop.evidence import (
    EvidenceBudget,
    EvidenceFinder,
    partition_by_scope,
    partition_failures,
)
from groundwire.evaluation.evalloop.items import items_from_frozen, items_from_log, text_id
from groundwire.evaluation.evalloop.summary import summarise
from groundwire.foundation.types import Chunk

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.core.verifier import Verifier
    from groundwire.data.rows import EvalRow
    from groundwire.data.store import Store
    from groundwire.scoring.embedder import Embedder


@dataclass(frozen=True, slots=True)
class EvalLoopResult:
    frozen: dict[str, Any] | None
    rolling: dict[str, Any] | None
    history: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, Any] | None = None
    """A scope's reviewers' labels and what a threshold refit on them would do (`labels.LabelsSection.to_dict`)."""

    def to_dict(self) -> dict[str, Any]:
        return {"meta": self.meta, "frozen": self.frozen, "rolling": self.rolling, "history": self.history,
                "labels": self.labels}


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
