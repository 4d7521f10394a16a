"""Repair a checked answer: keep what is supported, minimally edit the middle band, drop the rest.

Per claim: a SUPPORTED claim (route accept) is kept. A claim from the escalation band, a CONTRADICTED
claim, or a claim only partly supported (some of its words found, some not) is edited by the LLM toward
its evidence chunk and the edit is re-verified with the scorer ("... costs 25 euros" against "costs 15
euros" becomes "... costs 15 euros" instead of losing its true half); any other claim is dropped. The
corrector never adds information: an edit that brings in a content word or figure found neither in the
claim nor in the context, or that the scorer does not accept, is dropped. An unreadable edit reply drops
the claim; an endpoint failure raises LLMError. Without an LLM client every claim that is not supported is
dropped, so repair still works offline.

The surviving text is reassembled with citations (`cite=False`: only those the kept sentences had); when the surviving share of claims falls below
`min_surviving_share`, the answer is replaced by the abstention message (NOT_IN_CONTEXT by default).
"""

from __future__ import annotations

import dataclasses
import re
from itertools import groupby
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from groundwire.llm import prompts
from groundwire.core.novelty import added_content
from groundwire.core.claims import CITATION_RE, strip_citations
from groundwire.llm.client import LLMClient, LLMOutputError
from groundwire.core.textutil import STOPWORDS, WORD_RE, normalize
from groundwire.core.types import REFUSAL_TOKEN, Chunk, ClaimResult, Report, Route, Verdict
from groundwire.core.verifier import as_chunks

if TYPE_CHECKING:
    from groundwire.core.verifier import Verifier

Action = Literal["keep", "edit", "drop"]


class EditReply(BaseModel):
    edited: str


@dataclass(frozen=True, slots=True)
class RepairAction:
    claim: str
    action: Action
    reason: str
    edited: str | None = None
    chunk_id: str | None = None


@dataclass(frozen=True, slots=True)
class Repaired:
    answer: str
    abstained: bool
    surviving_share: float
    actions: tuple[RepairAction, ...]
    report: Report
    """The repaired answer, verified again (an abstention gives an abstained report)."""
    original: Report

    def to_dict(self) -> dict[str, object]:
        return {
            "answer": self.answer,
            "abstained": self.abstained,
            "surviving_share": self.surviving_share,
            "actions": [dataclasses.asdict(action) for action in self.actions],
            "report": self.report.to_dict(),
            "original_score": self.original.score,
        }


def repair(
    report: Report,
    chunks: Sequence[Chunk | str],
    *,
    verifier: Verifier,
    client: LLMClient | None = None,
    min_surviving_share: float = 0.5,
    abstain_message: str = REFUSAL_TOKEN,
    cite: bool = True,
) -> Repaired:
    """Repair the answer `report` describes. `chunks` must be the context it was checked against. With
    `cite=False` no citation marker is added: for callers whose chunk ids are not names the reader knows."""
    chunks = as_chunks(chunks)
    if report.abstained or not report.claims:
        return Repaired(report.answer, report.abstained, 1.0, (), report, report)
    by_id = {chunk.id: chunk for chunk in chunks}
    decisions = [
        _decide(result, chunks, by_id, report=report, verifier=verifier, client=client) for result in report.claims
    ]
    surviving = sum(action.action != "drop" for action in decisions)
    share = surviving / len(decisions)
    if surviving == 0 or share < min_surviving_share:
        return Repaired(abstain_message, True, share, tuple(decisions), _abstained(report, abstain_message), report)
    answer = reassemble(report, decisions, cite=cite)
    return Repaired(answer, False, share, tuple(decisions), _verify_as(report, answer, chunks, verifier), report)


def _verify_as(report: Report, text: str, chunks: Sequence[Chunk], verifier: Verifier) -> Report:
    """Verify `text` as `report`'s answer was: its question and task, so its calibration (summary, data2text...)
    decides the edit and the repaired answer too."""
    return verifier.verify(text, chunks, question=report.question, task=report.extra.get("task"))


def _decide(
    result: ClaimResult,
    chunks: Sequence[Chunk],
    by_id: dict[str, Chunk],
    *,
    report: Report,
    verifier: Verifier,
    client: LLMClient | None,
) -> RepairAction:
    text = result.claim.text
    if result.route is Route.ACCEPT and result.verdict is Verdict.SUPPORTED:
        return RepairAction(text, "keep", "supported", chunk_id=result.chunk_id)
    dropped = f"{result.verdict.value.lower()} (score {result.score:.2f})"
    if not _editable(result, report.answer) or result.chunk_id not in by_id:
        return RepairAction(text, "drop", dropped)
    if client is None:
        return RepairAction(text, "drop", f"{dropped}; no LLM configured to edit it")
    return _edit(result, by_id[result.chunk_id], chunks, report=report, verifier=verifier, client=client)


def _editable(result: ClaimResult, answer: str) -> bool:
    """Worth a minimal edit: doubtful, contradicted by its evidence, or with some of its words supported."""
    return result.route is Route.ESCALATE or result.verdict is Verdict.CONTRADICTED or _partly_supported(result, answer)


def _partly_supported(result: ClaimResult, answer: str) -> bool:
    # Some content word of the claim lies outside every unsupported span (the spans say what is novel).
    if not result.unsupported_spans:
        return False
    start, end = result.claim.span
    text = CITATION_RE.sub(lambda m: " " * len(m.group()), answer[start:end])  # "[S1]" is not a claim word
    words = [start + m.start() for m in WORD_RE.finditer(text) if normalize(m.group()) not in STOPWORDS]
    return any(not any(a <= at < b for a, b in result.unsupported_spans) for at in words)


def _edit(
    result: ClaimResult,
    chunk: Chunk,
    chunks: Sequence[Chunk],
    *,
    report: Report,
    verifier: Verifier,
    client: LLMClient,
) -> RepairAction:
    text = result.claim.text
    try:
        reply, _ = client.chat_json(prompts.edit_messages(text, chunk), EditReply, purpose="repair_edit")
    except LLMOutputError as exc:  # the endpoint answered, the reply is unusable: this claim only
        return RepairAction(text, "drop", f"edit unreadable: {exc}")
    edited = strip_citations(reply.edited).strip()
    if not edited:
        return RepairAction(text, "drop", "the corrector found no supported edit")
    added = added_content(text, edited, " ".join(c.text for c in chunks))
    if added:
        return RepairAction(
            text, "drop", f"the edit adds content the context does not have: {', '.join(added)}", edited=edited
        )
    check = _verify_as(report, edited, chunks, verifier)
    if check.decision is not Route.ACCEPT or not check.claims:
        return RepairAction(text, "drop", f"the edit did not verify (score {check.score:.2f})", edited=edited)
    return RepairAction(
        text,
        "edit",
        f"edited and re-verified (score {check.score:.2f})",
        edited=edited,
        chunk_id=check.claims[0].chunk_id,
    )


def reassemble(report: Report, actions: Sequence[RepairAction], *, cite: bool = True) -> str:
    """Surviving text with citations. A sentence whose claims all survive unedited keeps its own words;
    otherwise each surviving claim of it is written out with the chunk that supports it (`cite=False`: without
    a marker, and a sentence kept whole keeps the writer's own markers, which are not checked against ids)."""
    out = ""
    last_end: int | None = None
    pairs = zip(report.claims, actions, strict=True)
    for sentence, group in groupby(pairs, key=lambda pair: pair[0].claim.sentence):
        members = list(group)
        if all(action.action == "keep" for _, action in members) and (not cite or _citations_hold(members)):
            pieces = [sentence.strip()]
        else:
            pieces = [
                _cited(a.edited or r.claim.text, a.chunk_id if cite else None) for r, a in members if a.action != "drop"
            ]
        if pieces:
            # Line breaks between surviving sentences are kept, so lists stay lists.
            gap = report.answer[last_end : members[0][0].claim.span[0]] if last_end is not None else ""
            out += ("\n" if "\n" in gap else " ") if out else ""
            out += " ".join(pieces)
            last_end = members[-1][0].claim.span[1]
    return out


def _citations_hold(members: list[tuple[ClaimResult, RepairAction]]) -> bool:
    # Keep the writer's own citations only when they include the chunk that actually supports each claim.
    return all(action.chunk_id is None or action.chunk_id in result.claim.cited_ids for result, action in members)


def _cited(text: str, chunk_id: str | None) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    match = re.search(r"[.!?]+$", text)
    body, end = (text[: match.start()], match.group()) if match else (text, ".")
    return f"{body} [{chunk_id}]{end}" if chunk_id else f"{body}{end}"


def _abstained(report: Report, message: str) -> Report:
    return dataclasses.replace(
        report,
        answer=message,
        score=1.0,
        decision=Route.ACCEPT,
        claims=(),
        abstained=True,
        findings=(),
        extra={**report.extra, "repaired_from": report.answer},
    )
