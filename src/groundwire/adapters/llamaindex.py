"""LlamaIndex: `GroundwireEvaluator`, a BaseEvaluator (`evaluate(query, contexts=..., response=...)` and
`evaluate_response(query, response)` return an EvaluationResult with passing, score and feedback, plus
`outcome`), and `GroundedQueryEngine`, which wraps a query engine and repairs or abstains before its answer
leaves. Both follow the adapters' one rule (docs/adapters.md): `passing` is True for an accepted answer only;
an escalated one has `passing=False`, `outcome="review"` and feedback that starts "needs review".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Unpack

from groundwire.adapters.common import (
    OUTCOME_OF_ROUTE,
    AdapterCheck,
    AdapterOptions,
    context_texts,
)
from groundwire.core.plan import as_chunks
from groundwire.foundation.extras import optional_import
from groundwire.foundation.types import REFUSAL_TOKEN, Report
from groundwire.llm.repair import repair
from groundwire.pipeline import CheckItem, check

with optional_import("llamaindex", needed_by=__name__):
    from llama_index.core.base.base_query_engine import BaseQueryEngine
    from llama_index.core.base.response.schema import Response
    from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
    from llama_index.core.schema import QueryBundle

if TYPE_CHECKING:
    from groundwire.llm.client import LLMClient
    from groundwire.llm.repair import Repaired


class GroundwireEvaluationResult(EvaluationResult):
    outcome: str | None = None
    """"pass", "fail" or "review" (groundwire's accept, reject or escalate)."""


class GroundwireEvaluator(BaseEvaluator):
    def __init__(self, **options: Unpack[AdapterOptions]) -> None:
        """`options` as every adapter's (AdapterOptions)."""
        self._check = AdapterCheck("GroundwireEvaluator()", **options)

    def _get_prompts(self) -> dict[str, Any]:
        return {}  # no LLM, no prompts

    def _update_prompts(self, prompts: dict[str, Any]) -> None:
        pass

    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[str] | None = None, **kwargs: Any) -> EvaluationResult:
        if not response or not contexts:
            raise ValueError("GroundwireEvaluator needs a response and its contexts")
        assessment = await self._check.arun(response, context_texts(contexts), question=query)
        return GroundwireEvaluationResult(query=query, contexts=list(contexts), response=response,
                                          passing=assessment.passed, score=assessment.value,
                                          feedback=assessment.reason, outcome=assessment.outcome.value)


class GroundedQueryEngine(BaseQueryEngine):
    """Answers from `query_engine`, checked against the response's own source nodes: an accepted answer
    passes unchanged; any other is repaired (unsupported claims dropped, the supported part of a compound claim
    kept; with an LLM `client`, middle-band claims edited toward their evidence) or replaced by `abstain_message` when too little survives.
    The report is in `response.metadata["groundwire"]`."""

    def __init__(self, query_engine: BaseQueryEngine, *, client: LLMClient | None = None,
                 min_surviving_share: float = 0.5, abstain_message: str = REFUSAL_TOKEN,
                 **options: Unpack[AdapterOptions]) -> None:
        """`options` as every adapter's (AdapterOptions)."""
        super().__init__(callback_manager=query_engine.callback_manager)
        self._engine = query_engine
        self._check = AdapterCheck("GroundedQueryEngine()", **options)
        self._client = client
        self._min_share = min_surviving_share
        self._abstain = abstain_message

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {"query_engine": self._engine}

    def _query(self, query_bundle: QueryBundle) -> Response:
        return self.ground(self._engine.query(query_bundle), query_bundle.query_str)

    async def _aquery(self, query_bundle: QueryBundle) -> Response:
        import anyio.to_thread

        response = await self._engine.aquery(query_bundle)
        return await anyio.to_thread.run_sync(self.ground, response, query_bundle.query_str)

    def ground(self, response: Any, question: str | None = None) -> Response:
        return _ground(response, question, self._check, client=self._client, min_surviving_share=self._min_share,
                       abstain_message=self._abstain)


def ground_response(response: Any, question: str | None = None, *, client: LLMClient | None = None,
                    min_surviving_share: float = 0.5, abstain_message: str = REFUSAL_TOKEN,
                    **options: Unpack[AdapterOptions]) -> Response:
    """The response postprocessor: check one Response against its source nodes; return it unchanged when
    accepted, else repaired, or `abstain_message` when less than `min_surviving_share` of its claims survive.
    The repair adds no citation marker: the nodes' positions are groundwire's chunk ids (S1, S2...), not names
    the user's nodes carry, so only the markers of sentences kept whole remain. `options` as every adapter's."""
    return _ground(response, question, AdapterCheck("ground_response()", **options), client=client,
                   min_surviving_share=min_surviving_share, abstain_message=abstain_message)


def _ground(response: Any, question: str | None, adapter_check: AdapterCheck, *, client: LLMClient | None,
            min_surviving_share: float, abstain_message: str) -> Response:
    checker = adapter_check.resolve()
    nodes = list(getattr(response, "source_nodes", []) or [])
    contexts = context_texts(nodes)
    text = str(getattr(response, "response", None) or "")
    if not contexts or not text.strip():
        return _with_report(response, text, nodes, None, None)
    report = check(checker.verifier, CheckItem(text, as_chunks(contexts), question=question, task=adapter_check.task),
                   judge=checker.judge)
    if report.grounded:
        return _with_report(response, text, nodes, report, None)
    repaired = repair(report, contexts, check=checker, client=client, min_surviving_share=min_surviving_share,
                      abstain_message=abstain_message, cite=False)
    return _with_report(response, repaired.answer, nodes, report, repaired)


def _with_report(response: Any, text: str, nodes: list[Any], report: Report | None,
                 repaired: Repaired | None) -> Response:
    metadata = dict(getattr(response, "metadata", None) or {})
    metadata["groundwire"] = {
        "report": report.to_dict() if report is not None else None,
        "outcome": OUTCOME_OF_ROUTE[report.route].value if report is not None else None,
        "repaired": repaired.to_dict() if repaired is not None else None,
        "abstained": bool(repaired and repaired.abstained),
    }
    return Response(response=text, source_nodes=nodes, metadata=metadata)
