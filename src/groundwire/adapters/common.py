"""The one rule all ten adapters follow (docs/adapters.md has it as a table), and reading their contexts.

- `score`: what a metric reports. "share" (the default) is the share of SUPPORTED claims, which is how RAGAS,
  DeepEval, LlamaIndex and Haystack define faithfulness, so a groundwire column compares like for like with
  theirs; "min" is groundwire's answer score (the weakest claim), the number its routing reads.
- outcome: passing follows groundwire's routing, never a cut on the reported score. ACCEPT passes, REJECT
  fails, ESCALATE is REVIEW: not a pass, and said so in the outcome and the reason's first line.
- thresholds: the only ones are the verifier's `accept_at` / `reject_at` (the scorer's calibrated values by
  default); every adapter takes them as keywords. None takes a `threshold` of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, PrivateAttr

from groundwire.core.explain import format_threshold, unsupported
from groundwire.core.plan import as_chunks
from groundwire.foundation.types import Chunk, Report, Route
from groundwire.pipeline import CheckItem, averify, check, given_or_shared

if TYPE_CHECKING:
    from groundwire.core.verifier import Verifier
    from groundwire.foundation.types import Thresholds

AnswerScore = Literal["share", "min"]
"""Which number a framework's metric reports: "share" of SUPPORTED claims (default), or "min", the weakest
claim's score."""

DEFAULT_SCORE: AnswerScore = "share"
THRESHOLD_REFUSED = (
    "{adapter} takes no threshold: it passes what groundwire's routing accepts, fails what it rejects and "
    "marks the band between for review. To move the line, set accept_at= (and reject_at=) on it or on your "
    "Verifier; see docs/adapters.md."
)


class Outcome(StrEnum):
    PASS = "pass"  # routed ACCEPT
    FAIL = "fail"  # routed REJECT
    REVIEW = "review"  # routed ESCALATE: groundwire's LLM judge or a person decides; never counted as a pass


OUTCOME_OF_ROUTE = {Route.ACCEPT: Outcome.PASS, Route.REJECT: Outcome.FAIL, Route.ESCALATE: Outcome.REVIEW}


@dataclass(frozen=True)
class Assessment:
    """One answer as every adapter reports it."""

    report: Report
    score: float
    outcome: Outcome
    reason: str
    accept_at: float
    reject_at: float

    @property
    def passed(self) -> bool:
        """True only for PASS: a REVIEW answer has not passed (frameworks with a pass/fail flag show False)."""
        return self.outcome is Outcome.PASS


@dataclass(frozen=True)
class AdapterCheck:
    """How an adapter checks an answer: the verifier (the one given, else the process-wide one for `scorer`
    and the thresholds), the task, and the score it reports. One code path for all ten adapters."""

    score: AnswerScore = DEFAULT_SCORE
    verifier: Verifier | None = None
    scorer: str | None = None
    task: str | None = None
    accept_at: float | None = None
    reject_at: float | None = None

    def __post_init__(self) -> None:
        if self.score not in ("share", "min"):
            raise ValueError(f"score must be 'share' or 'min', not {self.score!r}")
        own = {"scorer": self.scorer, "accept_at": self.accept_at, "reject_at": self.reject_at}
        given = [name for name, value in own.items() if value is not None]
        if self.verifier is not None and given:
            raise ValueError(f"pass either a verifier (it has its own scorer and thresholds) or {', '.join(given)}, "
                             "not both")

    def resolve(self) -> Verifier:
        return given_or_shared(self.verifier, self.scorer, accept_at=self.accept_at, reject_at=self.reject_at)

    def run(self, answer: str, contexts: Sequence[Chunk | str], question: str | None = None, *,
            response_id: str | None = None) -> Assessment:
        """Check one answer. `response_id`: the id of the model response that wrote it, put on the check's spans
        and GenAI evaluation events (`gen_ai.response.id`)."""
        verifier = self.resolve()
        item = CheckItem(answer, as_chunks(contexts), question=question, task=self.task, response_id=response_id)
        return assess(check(verifier, item), self.score, verifier.thresholds_for(self.task))

    async def arun(self, answer: str, contexts: Sequence[Chunk | str], question: str | None = None, *,
                   response_id: str | None = None) -> Assessment:
        verifier = self.resolve()
        report = await averify(answer, contexts, question=question, task=self.task, verifier=verifier,
                               response_id=response_id)
        return assess(report, self.score, verifier.thresholds_for(self.task))


def assess(report: Report, kind: AnswerScore, thresholds: Thresholds) -> Assessment:
    outcome = OUTCOME_OF_ROUTE[report.decision]
    accept_at, reject_at = thresholds
    return Assessment(report, answer_score(report, kind), outcome, reason(report, outcome, thresholds),
                      accept_at, reject_at)


def answer_score(report: Report, kind: AnswerScore) -> float:
    if kind == "share":
        return report.supported_share
    if kind == "min":
        return report.score
    raise ValueError(f"score must be 'share' or 'min', not {kind!r}")


def reason(report: Report, outcome: Outcome, thresholds: Thresholds) -> str:
    """First line: the outcome and why; then one line per unsupported claim, with its verdict and score."""
    accept_at, reject_at = thresholds
    if report.abstained:
        return "pass: the answer abstains (NOT_IN_CONTEXT); nothing is claimed."
    if not report.claims and outcome is Outcome.PASS:
        return "pass: the answer makes no checkable claim."
    missing = unsupported(report)
    counted = (f"{len(missing)} of {len(report.claims)} claims are not supported by the context"
               if missing else f"every claim is supported by the context ({len(report.claims)} of {len(report.claims)})")
    accept, reject = format_threshold(accept_at), format_threshold(reject_at)
    band = {
        Outcome.PASS: f"answer score {report.score:.2f} >= accept_at {accept}",
        Outcome.FAIL: f"answer score {report.score:.2f}, rejected (reject_at {reject}, accept_at {accept})",
        Outcome.REVIEW: f"answer score {report.score:.2f}, escalated (reject_at {reject}, "
                        f"accept_at {accept}); groundwire's LLM judge or a person decides",
    }[outcome]
    head = f"{'needs review' if outcome is Outcome.REVIEW else outcome.value}: {counted} ({band})"
    notes = [f"- {finding.check}: {finding.detail}" for finding in report.findings]
    notes += [f"- {warning}" for warning in report.warnings if outcome is not Outcome.PASS]
    lines = [f'- "{result.claim.text}": {result.verdict.value}, score {result.score:.2f}'
             + (f" ({result.checks[0].check}: {result.checks[0].detail})" if result.checks else "")
             for result in missing]
    body = lines + notes
    return "\n".join([head + (":" if body else "."), *body])


def refuse_threshold(adapter: str, threshold: object) -> None:
    """The adapters that used to take a `threshold` say why they no longer do, rather than ignore it."""
    if threshold is not None:
        raise TypeError(THRESHOLD_REFUSED.format(adapter=adapter))


def context_texts(contexts: object) -> list[str]:
    """A context given as one string, or a sequence of strings or framework documents: LangChain and
    Haystack Documents (page_content / content), LlamaIndex nodes (get_content()) and NodeWithScore."""
    if contexts is None:
        return []
    if isinstance(contexts, str):
        return [contexts]
    if not isinstance(contexts, Iterable):
        raise TypeError(f"contexts must be a string or a sequence, not {type(contexts).__name__}")
    return [_text(item) for item in contexts]


def _text(item: object) -> str:
    if isinstance(item, str):
        return item
    node = getattr(item, "node", None)  # LlamaIndex NodeWithScore
    if node is not None and hasattr(node, "get_content"):
        return str(node.get_content())
    if hasattr(item, "get_content"):
        return str(item.get_content())
    for attribute in ("page_content", "content", "text"):
        value = getattr(item, attribute, None)
        if isinstance(value, str):
            return value
    raise TypeError(f"cannot read the text of a context item of type {type(item).__name__}")


class AdapterSettings(BaseModel):
    """An adapter whose framework keeps its settings as a pydantic model (MLflow scorers, TruLens providers, saved
    and loaded again): `score`, `scorer`, `task`, `accept_at` and `reject_at` as every adapter takes them, or a
    `verifier=` (not saved), checked through the one AdapterCheck."""

    score: AnswerScore = DEFAULT_SCORE
    scorer: str | None = None
    task: str | None = None
    accept_at: float | None = None
    reject_at: float | None = None
    _verifier: Verifier | None = PrivateAttr(default=None)

    def __init__(self, *, verifier: Verifier | None = None, threshold: None = None, **settings: Any) -> None:
        refuse_threshold(type(self).__name__, threshold)
        super().__init__(**settings)
        self._verifier = verifier
        self.adapter_check()  # refuse a bad score, or a verifier given with settings of its own, now

    def adapter_check(self) -> AdapterCheck:
        return AdapterCheck(score=self.score, verifier=self._verifier, scorer=self.scorer, task=self.task,
                            accept_at=self.accept_at, reject_at=self.reject_at)
