"""A Guardrails AI validator: `Guard().use(GroundwireGrounded())`, then
`guard.validate(answer, metadata={"chunks": [...]})`. Registered as `groundwire/grounded`.

It follows groundwire's routing:

- ACCEPT passes;
- REJECT fails, its error listing each unsupported claim (verdict, score, checks, best evidence);
- ESCALATE fails too by default (`on_escalate="fail"`), its error starting "escalated:", because a validator has
  no judge to settle it and must neither pass it silently nor hide it. `on_escalate="pass"` lets it through
  for a caller that escalates on its own: the PassResult's metadata says `route: escalate`, and a warning
  is logged (logger `groundwire.adapters.guardrails`).

A failure carries a `fix_value`: groundwire's repair of the answer (unsupported claims dropped, the supported part
of a compound claim kept; with an LLM `client`, middle-band claims minimally edited and checked again), or the abstention `NOT_IN_CONTEXT` when too
little of it survives. So `on_fail="fix"` ships a grounded answer, and Guardrails reports it as passed
(`validation_passed=True`), the abstention included; the validator's summary (`validation_summaries`) keeps the
failure (docs/adapters.md). The repair cites only chunk ids the caller named: with plain-string chunks it adds no
`[S1]` markers.

Chunks come with each call (`metadata["chunks"]`, plus an optional `metadata["question"]`) or, for a fixed
context, with the validator (`chunks=`). Nothing is sent anywhere: the check runs locally (`use_local=True`),
and no LLM is called unless a `client` is given for repair. `Guard.to_dict()` / `from_dict()` keep `chunks`,
the adapter options (`settings`, `scorer`, `task`, the thresholds), `on_escalate` and `min_surviving_share`; a
`verifier` or `client` object is not recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Unpack

from groundwire.adapters.common import AdapterCheck, AdapterOptions
from groundwire.core.claims import CITATION_RE, cited_ids
from groundwire.core.explain import explain, unsupported
from groundwire.foundation.extras import optional_import
from groundwire.foundation.types import Chunk, Report, Route
from groundwire.llm.repair import repair
from groundwire.pipeline import Checker

with optional_import("guardrails", needed_by=__name__):
    from guardrails.validators import FailResult, PassResult, ValidationResult, Validator, register_validator

if TYPE_CHECKING:
    from groundwire.llm.client import LLMClient

OnEscalate = Literal["fail", "pass"]
logger = logging.getLogger(__name__)


@register_validator(name="groundwire/grounded", data_type="string")
class GroundwireGrounded(Validator):  # type: ignore[misc]  # guardrails ships no type information
    def __init__(
        self,
        chunks: Sequence[Chunk | str] | None = None,
        *,
        on_escalate: OnEscalate = "fail",
        client: LLMClient | None = None,
        min_surviving_share: float = 0.5,
        on_fail: str | Callable[[Any, FailResult], Any] | None = None,
        **options: Unpack[AdapterOptions],
    ) -> None:
        """`options` as every adapter's (AdapterOptions; `score` does not change a pass or a fail)."""
        if on_escalate not in ("fail", "pass"):
            raise ValueError(f"on_escalate must be 'fail' or 'pass', not {on_escalate!r}")
        # The one adapter rule (common.AdapterCheck): a verifier, or settings (scorer, thresholds), never both.
        self._check = AdapterCheck("GroundwireGrounded()", **options)
        self.chunks = list(chunks) if chunks is not None else None
        # the kwargs Guardrails records for Guard.to_dict / from_dict (a verifier or client object it cannot)
        super().__init__(on_fail=on_fail, chunks=self.chunks, on_escalate=on_escalate,
                         min_surviving_share=min_surviving_share, **self._check.saved())
        self.use_local = True  # the check runs here, never on a hub inference endpoint
        self.on_escalate: OnEscalate = on_escalate
        self.client = client
        self.min_surviving_share = min_surviving_share
        self.last_report: Report | None = None
        """The report of the latest call, for a caller that wants more than pass or fail."""

    def _validate(self, value: Any, metadata: dict[str, Any]) -> ValidationResult:
        if not isinstance(value, str):
            raise TypeError(f"GroundwireGrounded checks a string answer, not {type(value).__name__}")
        chunks = self._chunks(metadata)
        checker = self._check.resolve()
        thresholds = checker.verifier.thresholds_for(self._check.task)
        report = self._check.run(value, chunks, question=metadata.get("question")).report
        self.last_report = report
        summary = _summary(report)
        if report.route is Route.ACCEPT:
            return PassResult(metadata=summary)
        if report.route is Route.ESCALATE and self.on_escalate == "pass":
            logger.warning("groundwire escalated an answer and on_escalate='pass' lets it through:\n%s",
                           explain(report, thresholds))
            return PassResult(metadata=summary)
        head = "escalated" if report.route is Route.ESCALATE else "not grounded"
        return FailResult(error_message=f"{head}: {explain(report, thresholds)}",
                          fix_value=self._repaired(report, chunks, checker), metadata=summary)

    def _chunks(self, metadata: dict[str, Any]) -> list[Chunk | str]:
        given = metadata.get("chunks", self.chunks)
        if given is None:
            raise ValueError("GroundwireGrounded needs the retrieved chunks: pass metadata={'chunks': [...]} to "
                             "guard.validate, or chunks=[...] to the validator")
        if isinstance(given, str):
            raise ValueError("metadata['chunks'] must be a list of passages, not a single string: wrap it as [text]")
        return list(given)

    def _repaired(self, report: Report, chunks: Sequence[Chunk | str], checker: Checker) -> str:
        repaired = repair(report, chunks, check=checker, client=self.client,
                          min_surviving_share=self.min_surviving_share)
        if any(isinstance(chunk, Chunk) for chunk in chunks):
            return repaired.answer  # the caller named its chunks: citing them is citing what it named
        return _without_new_citations(repaired.answer, report.answer)


def _summary(report: Report) -> dict[str, Any]:
    return {"route": report.route.value, "score": report.score, "supported_share": report.supported_share,
            "unsupported": [{"claim": r.claim.text, "verdict": r.verdict.value, "score": r.score,
                             "chunk_id": r.chunk_id, "evidence": r.evidence} for r in unsupported(report)]}


def _without_new_citations(text: str, original: str) -> str:
    """Drop the citation markers the repair added for chunks that were given as plain strings (their ids S1..Sn
    are groundwire's, not the caller's); markers the original answer wrote itself stay."""
    own = set(cited_ids(original))

    def keep(match: Any) -> str:
        ids = set(cited_ids(match.group(0)))
        return str(match.group(0)) if ids and ids <= own else ""

    return CITATION_RE.sub(keep, text)
