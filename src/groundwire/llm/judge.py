"""The LLM judge for claims in the escalation band: quote first, then rule; code checks the quote.

The model must copy the sentence it relies on. Code then checks that the quote occurs verbatim in the
chunk it names, after normalising only whitespace, quote characters and case. A SUPPORTED ruling
without such a quote becomes NOT_FOUND (`confabulated_support`); a chunk id that is not in the context
is recorded as `fabricated_citation`; output that does not parse leaves the claim escalated (`unparseable`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from groundwire.core.plan import as_chunks
from groundwire.core.tracing import traced
from groundwire.foundation.textutil import content_words
from groundwire.foundation.types import (
    Chunk,
    ClaimResult,
    DecidedBy,
    Finding,
    JudgeOutcome,
    JudgeSummary,
    Report,
    Route,
    Verdict,
)
from groundwire.llm import prompts
from groundwire.llm.client import Completion, LLMClient, LLMOutputError, parse_json_reply
from groundwire.llm.errors import LLMError

MIN_QUOTE_WORDS = 2
"""A one-word "quote" occurs in almost any chunk, so it proves nothing."""

_QUOTE_CHARS = str.maketrans(
    {c: '"' for c in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"} | {c: "'" for c in "\u2018\u2019\u201a\u201b\u2032`"}
)
_SPACE_RE = re.compile(r"\s+")


RULINGS = (Verdict.SUPPORTED, Verdict.CONTRADICTED, Verdict.NOT_FOUND)
"""What the judge may rule: UNRESOLVED is the band it is asked to resolve."""


def _reply_schema(schema: dict[str, Any]) -> None:
    # A server that decodes to the schema (llama.cpp's grammar) writes the required fields first and may leave
    # the optional ones out: SmolLM2 then wrote the verdict with no quote. With all four required, in this
    # order, the quote comes before the ruling, as the prompt asks. Parsing stays lenient (the defaults).
    schema["required"] = list(schema["properties"])
    schema["properties"]["verdict"] = {"type": "string", "enum": [ruling.value for ruling in RULINGS]}
    schema.pop("$defs", None)  # only the verdict's enum lived there


class JudgeReply(BaseModel):
    model_config = ConfigDict(json_schema_extra=_reply_schema)

    quote: str = ""
    chunk_id: str | None = None
    verdict: Verdict
    reason: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper().replace(" ", "_") if isinstance(value, str) else value

    @field_validator("verdict")
    @classmethod
    def _a_ruling(cls, value: Verdict) -> Verdict:
        # A judge that answers UNRESOLVED has not judged: its reply is unreadable and the claim stays escalated.
        if value not in RULINGS:
            raise ValueError(f"the judge must rule {', '.join(r.value for r in RULINGS)}, not {value.value}")
        return value

    @field_validator("chunk_id", mode="before")
    @classmethod
    def _bare_id(cls, value: Any) -> Any:
        # "[S1]" and "S1" name the same chunk; anything else is compared as written.
        return value.strip().strip("[]").strip() or None if isinstance(value, str) else value


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    quote: str
    chunk_id: str | None
    reason: str
    finding: Finding | None = None
    """confabulated_support, unrelated_quote, fabricated_citation, unquoted_contradiction or unparseable; None when
    clean."""
    model_verdict: Verdict | None = None
    """What the model said before the quote check (None when unparseable)."""
    completion: Completion | None = None
    """The call behind this judgement (latency, tokens); None when built from a reply directly."""


def normalise_quote(text: str) -> str:
    """Only whitespace, quote characters and case are normalised; nothing else."""
    return _SPACE_RE.sub(" ", text.translate(_QUOTE_CHARS)).strip().casefold()


def quote_in_chunk(quote: str, chunk_text: str) -> bool:
    needle = normalise_quote(quote)
    return len(needle.split()) >= MIN_QUOTE_WORDS and needle in normalise_quote(chunk_text)


def quote_span(quote: str, chunk_text: str) -> tuple[int, int] | None:
    """Where a verified quote sits in the raw chunk text (same normalisation as quote_in_chunk)."""
    words = [re.escape(word.translate(_QUOTE_CHARS)) for word in quote.split()]
    any_quote = {
        re.escape('"'): '["\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb]',
        re.escape("'"): "['\u2018\u2019\u201a\u201b\u2032`]",
    }
    pattern = r"\s+".join("".join(any_quote.get(ch, ch) for ch in _escaped_units(word)) for word in words)
    match = re.search(pattern, chunk_text, re.IGNORECASE) if words else None
    return (match.start(), match.end()) if match else None


def _escaped_units(escaped: str) -> list[str]:
    # Split an re.escape()d word into single (possibly backslashed) characters.
    return re.findall(r"\\.|.", escaped, re.DOTALL)


def check_reply(reply: JudgeReply, chunks: Sequence[Chunk], claim: str) -> Judgement:
    """Turn the model's ruling into a verdict the quote can back: verbatim in the chunk it names, and about the
    claim (a quote that shares no content word with the claim states neither it nor its opposite)."""
    by_id = {chunk.id: chunk for chunk in chunks}

    def ruled(verdict: Verdict, finding: Finding | None = None) -> Judgement:
        return Judgement(verdict, reply.quote, reply.chunk_id, reply.reason, finding=finding,
                         model_verdict=reply.verdict)

    if reply.chunk_id is not None and reply.chunk_id not in by_id:
        finding = Finding(
            "fabricated_citation",
            f"the judge named chunk [{reply.chunk_id}], which is not in the context",
            Verdict.NOT_FOUND,
        )
        return ruled(Verdict.NOT_FOUND, finding)
    if reply.verdict is Verdict.NOT_FOUND:
        return ruled(Verdict.NOT_FOUND)
    quoted = reply.chunk_id is not None and quote_in_chunk(reply.quote, by_id[reply.chunk_id].text)
    if quoted and not set(content_words(reply.quote)) & set(content_words(claim)):
        # SmolLM2 ruled "It was built for a world fair." SUPPORTED by quoting "The Eiffel Tower is in Paris."
        finding = Finding(
            "unrelated_quote",
            f"ruled {reply.verdict.value} on the quote {reply.quote!r}, which shares no content word with the claim",
            Verdict.NOT_FOUND,
        )
        return ruled(Verdict.NOT_FOUND, finding)
    if quoted:
        return ruled(reply.verdict)
    check = "confabulated_support" if reply.verdict is Verdict.SUPPORTED else "unquoted_contradiction"
    where = f"[{reply.chunk_id}]" if reply.chunk_id else "any named chunk"
    finding = Finding(
        check,
        f"ruled {reply.verdict.value} but the quote {reply.quote!r} is not verbatim in {where}",
        Verdict.NOT_FOUND,
    )
    return ruled(Verdict.NOT_FOUND, finding)


def judge_claim(claim: str, chunks: Sequence[Chunk], *, client: LLMClient) -> Judgement:
    """One judge call. Unparseable output is NOT_FOUND; transport errors (LLMError) propagate."""
    completion = client.chat(prompts.judge_messages(claim, chunks), json_object=JudgeReply, purpose="judge")
    try:
        reply = parse_json_reply(completion.text, JudgeReply)
    except LLMOutputError as exc:
        return dataclasses.replace(_unreadable(exc), completion=completion)
    return dataclasses.replace(check_reply(reply, chunks, claim), completion=completion)


def _unreadable(exc: LLMOutputError) -> Judgement:
    finding = Finding("unparseable", f"the judge's reply could not be read: {exc}")
    return Judgement(Verdict.NOT_FOUND, quote="", chunk_id=None, reason="unparseable", finding=finding)


def _not_judged(result: ClaimResult, finding: Finding) -> ClaimResult:
    # The scorer's score and route stand: a failed or unreadable judge call proves nothing either way.
    return dataclasses.replace(result, checks=result.checks + (finding,), note=f"judge: not judged ({finding.check})")


@traced("groundwire.judge")
def adjudicate(report: Report, chunks: Sequence[Chunk], *, client: LLMClient, required: bool = False) -> Report:
    """Let the judge decide every escalated claim; recompute the answer score and route.

    A judged claim scores 1.0 (SUPPORTED, route accept) or 0.0 (otherwise, route reject); the scorer's
    own probability stays in `support`. Calls, tokens and outcomes go to report.meta.judge.
    A claim the judge could not decide keeps its score and stays escalated, with a finding that says why:
    `judge_unavailable` (timeout, HTTP error) or `unparseable` (a reply that does not parse); its index is
    listed in meta.judge.not_judged and a warning names it. With `required`, an endpoint failure
    raises LLMError instead (the CLI's --judge: exit 3).
    """
    chunks = as_chunks(chunks)
    chunks_text = {chunk.id: chunk.text for chunk in chunks}
    claims: list[ClaimResult] = []
    outcomes: list[JudgeOutcome] = []
    completions: list[Completion] = []
    failed_calls = 0
    warnings = list(report.warnings)
    for index, result in enumerate(report.claims):
        if result.route is not Route.ESCALATE:
            claims.append(result)
            continue
        try:
            judgement = judge_claim(result.claim.text, chunks, client=client)
        except LLMError as exc:
            if required:
                raise
            failed_calls += 1
            finding = Finding("judge_unavailable", f"the judge could not be reached: {exc}")
            warnings.append(f"claim {index + 1} was not judged: {exc}")
            outcomes.append(JudgeOutcome(index, error=str(exc)))
            claims.append(_not_judged(result, finding))
            continue
        completions += [judgement.completion] if judgement.completion else []
        if judgement.finding is not None and judgement.finding.check == "unparseable":
            warnings.append(f"claim {index + 1} was not judged: {judgement.finding.detail}")
            outcomes.append(JudgeOutcome(index, error=judgement.finding.detail))
            claims.append(_not_judged(result, judgement.finding))
            continue
        claims.append(_judged(result, judgement, chunks_text))
        outcomes.append(
            JudgeOutcome(
                index,
                verdict=judgement.verdict,
                model_verdict=judgement.model_verdict,
                quote=judgement.quote,
                chunk_id=judgement.chunk_id,
                reason=judgement.reason,
                finding=judgement.finding.check if judgement.finding else None,
            )
        )
    # Cost from this report's own completions, not client.calls: a shared client serves other threads too.
    summary = JudgeSummary(
        calls=len(completions) + failed_calls,
        failed_calls=failed_calls,
        decided=tuple(o.claim for o in outcomes if o.error is None),
        not_judged=tuple(o.claim for o in outcomes if o.error is not None),
        prompt_tokens=sum(c.prompt_tokens or 0 for c in completions),
        completion_tokens=sum(c.completion_tokens or 0 for c in completions),
        latency_s=round(sum(c.latency_s for c in completions), 4),
        http_requests=sum(c.attempts for c in completions),
        outcomes=tuple(outcomes),
    )
    score = min((c.score for c in claims), default=1.0)
    return dataclasses.replace(
        report,
        claims=tuple(claims),
        score=score,
        route=_route(claims, report),
        warnings=tuple(warnings),
        meta=dataclasses.replace(report.meta, judge=summary),
    )


def _judged(result: ClaimResult, judgement: Judgement, chunks_text: dict[str, str]) -> ClaimResult:
    supported = judgement.verdict is Verdict.SUPPORTED
    quoted_in = judgement.chunk_id if judgement.verdict is not Verdict.NOT_FOUND else None
    quoted = quoted_in is not None
    evidence = judgement.quote if quoted else result.evidence
    chunk_id = quoted_in if quoted_in is not None else result.chunk_id
    span = quote_span(judgement.quote, chunks_text[quoted_in]) if quoted_in is not None else result.evidence_span
    checks = result.checks + ((judgement.finding,) if judgement.finding else ())
    note = f"judge: {judgement.verdict.value}" + (f" ({judgement.finding.check})" if judgement.finding else "")
    return dataclasses.replace(
        result,
        verdict=judgement.verdict,
        score=1.0 if supported else 0.0,
        route=Route.ACCEPT if supported else Route.REJECT,
        decided_by=DecidedBy.JUDGE,
        chunk_id=chunk_id,
        evidence=evidence,
        evidence_span=span,
        checks=checks,
        note=note,
        # The judge found support: no word of the claim is flagged any more.
        unsupported_spans=() if supported else result.unsupported_spans,
    )


def _route(claims: Sequence[ClaimResult], report: Report) -> Route:
    if not claims:
        return report.route
    routes = {claim.route for claim in claims}
    for route in (Route.REJECT, Route.ESCALATE):
        if route in routes:
            return route
    # As in the verifier: answer-level findings (a fabricated citation...) keep an answer from plain acceptance.
    return Route.ESCALATE if report.findings else Route.ACCEPT
