"""What every adapter shares: the answer score a metric reports, the reason text, and reading contexts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from groundwire.core.types import ClaimResult, Report, Verdict

AnswerScore = Literal["min", "share"]
"""Which number a framework's metric reports: "min" is groundwire's answer score (the weakest claim, what its
accept / reject routing uses); "share" is the share of SUPPORTED claims, the definition RAGAS, DeepEval and
Haystack use for faithfulness."""


def answer_score(report: Report, kind: AnswerScore) -> float:
    if kind == "min":
        return report.score
    if kind == "share":
        return report.supported_share
    raise ValueError(f"score must be 'min' or 'share', not {kind!r}")


def unsupported(report: Report) -> list[ClaimResult]:
    return [result for result in report.claims if result.verdict is not Verdict.SUPPORTED]


def reason(report: Report) -> str:
    """One line per unsupported claim, with its verdict and score; or why there is nothing to list."""
    if report.abstained:
        return "The answer abstains (NOT_IN_CONTEXT); nothing is claimed."
    if not report.claims:
        return "The answer makes no checkable claim."
    missing = unsupported(report)
    head = (f"{len(missing)} of {len(report.claims)} claims are not supported by the context "
            f"(answer score {report.score:.2f}, decision {report.decision.value})")
    if not missing:
        return f"All {len(report.claims)} claims are supported by the context (answer score {report.score:.2f})."
    lines = [f'- "{result.claim.text}": {result.verdict.value}, score {result.score:.2f}'
             + (f" ({result.checks[0].check}: {result.checks[0].detail})" if result.checks else "")
             for result in missing]
    return "\n".join([head + ":", *lines])


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
