"""Repair a checked answer: keep what is supported, minimally edit the middle band, drop the rest.

Per claim: a SUPPORTED claim (route accept) is kept. A claim from the escalation band, a CONTRADICTED
claim, or a claim only partly supported (some of its words found, some not) is edited by the LLM toward
its evidence chunk and the edit is re-verified with the scorer ("... costs 25 euros" against "costs 15
euros" becomes "... costs 15 euros" instead of losing its true half); any other claim is dropped. The
corrector never adds information: an edit that brings in a content word or figure found neither in the
claim nor in the context, or that the scorer does not accept, is dropped. An unreadable edit reply drops
the claim; an endpoint failure raises LLMError.

A compound claim that would be dropped (no LLM client, an edit that was dropped, or a claim not worth an edit) is
split at its coordination ("The plan costs $49 and includes phone support" -> "The plan costs $49." and
"The plan includes phone support.", see `conjuncts`) and each part verified as the answer was: the supported
parts are kept, the others dropped (or, with a client, edited as claims of their own). The parts are the claim's
own words, so a split adds nothing either, and repair keeps a claim's true half offline too.

The surviving text is reassembled with citations (`cite=False`: only those the kept sentences had); when the surviving share of claims falls below
`min_surviving_share`, the answer is replaced by the abstention message (NOT_IN_CONTEXT by default).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Literal

from pydantic import BaseModel

from groundwire.core.claims import CITATION_RE, strip_citations
from groundwire.core.memo import shared_work
from groundwire.core.novelty import KnownContent, added_content
from groundwire.core.plan import as_chunks
from groundwire.foundation.textutil import STOPWORDS, WORD_RE, normalize
from groundwire.foundation.types import REFUSAL_TOKEN, AnswerCheck, Chunk, ClaimResult, Report, Route, Verdict
from groundwire.llm import prompts
from groundwire.llm.client import LLMClient, LLMOutputError

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
    parts: tuple[RepairAction, ...] = ()
    """A claim split at its coordination: one action per part (keep, edit or drop); `edited` is the surviving
    parts' text."""


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
    check: AnswerCheck,
    client: LLMClient | None = None,
    min_surviving_share: float = 0.5,
    abstain_message: str = REFUSAL_TOKEN,
    cite: bool = True,
) -> Repaired:
    """Repair the answer `report` describes. `chunks` must be the context it was checked against. With
    `cite=False` no citation marker is added: for callers whose chunk ids are not names the reader knows. Its checks
    (each part of a claim it splits, each edit, the repaired answer) share their context work (core.memo)."""
    with shared_work():
        return _repair(report, as_chunks(chunks), check=check, client=client,
                       min_surviving_share=min_surviving_share, abstain_message=abstain_message, cite=cite)


def _repair(report: Report, chunks: Sequence[Chunk], *, check: AnswerCheck, client: LLMClient | None,
            min_surviving_share: float, abstain_message: str, cite: bool) -> Repaired:
    if report.abstained or not report.claims:
        return Repaired(report.answer, report.abstained, 1.0, (), report, report)
    by_id = {chunk.id: chunk for chunk in chunks}
    decisions = [
        _decide(result, chunks, by_id, report=report, check=check, client=client) for result in report.claims
    ]
    surviving = sum(action.action != "drop" for action in decisions)
    share = surviving / len(decisions)
    if surviving == 0 or share < min_surviving_share:
        return Repaired(abstain_message, True, share, tuple(decisions), _abstained(report, abstain_message), report)
    answer = reassemble(report, decisions, cite=cite)
    return Repaired(answer, False, share, tuple(decisions), _verify_as(report, answer, chunks, check), report)


def _verify_as(report: Report, text: str, chunks: Sequence[Chunk], check: AnswerCheck) -> Report:
    """Verify `text` as `report`'s answer was: its question and task, so its calibration (summary, data2text...)
    decides the edit and the repaired answer too."""
    return check(text, chunks, question=report.question, task=report.meta.task)


def _decide(
    result: ClaimResult,
    chunks: Sequence[Chunk],
    by_id: dict[str, Chunk],
    *,
    report: Report,
    check: AnswerCheck,
    client: LLMClient | None,
    split: bool = True,
) -> RepairAction:
    text = result.claim.text
    if result.route is Route.ACCEPT and result.verdict is Verdict.SUPPORTED:
        return RepairAction(text, "keep", "supported", chunk_id=result.chunk_id)
    dropped = f"{result.verdict.value.lower()} (score {result.score:.2f})"
    evidence = by_id.get(result.chunk_id) if result.chunk_id is not None else None
    editable = evidence is not None and _editable(result, report.answer)
    if evidence is not None and editable and client is not None:
        # The minimal edit of the whole claim first: it keeps the sentence's shape ("... takes 5 days and costs 15
        # euros"); only when it fails is the claim split, so that its supported part still survives.
        edit = _edit(result, evidence, chunks, report=report, check=check, client=client)
        parted = None if edit.action == "edit" or not split else _split(
            result, chunks, by_id, report=report, check=check, client=client, tried=edit.reason)
        return parted or edit
    parted = _split(result, chunks, by_id, report=report, check=check, client=client) if split else None
    if parted is not None:
        return parted
    if not editable:
        return RepairAction(text, "drop", dropped)
    return RepairAction(text, "drop", f"{dropped}; no LLM configured to edit it")


def _split(
    result: ClaimResult,
    chunks: Sequence[Chunk],
    by_id: dict[str, Chunk],
    *,
    report: Report,
    check: AnswerCheck,
    client: LLMClient | None,
    tried: str | None = None,
) -> RepairAction | None:
    """The claim split at its coordination, each part verified as the answer was: None when it does not split,
    or when no part is supported (the claim is then repaired whole). A supported part is kept; any other is
    decided as a claim of its own (dropped, or with an LLM edited and re-verified), never split again. `tried`:
    why the edit of the whole claim was dropped, for the reason."""
    text = result.claim.text
    parts = conjuncts(text)
    context = " ".join(chunk.text for chunk in chunks)
    # Each part is the claim's own words (its subject repeated): a part that would add anything is no split.
    if len(parts) < 2:
        return None
    known = KnownContent.of(text, context)  # read once for every part
    if any(known.added(part) for part in parts):
        return None
    verified = [(part, _verify_as(report, part, chunks, check)) for part in parts]
    if not any(_supported(part_report) for _, part_report in verified):
        return None
    actions: list[RepairAction] = []
    for part, part_report in verified:
        if _supported(part_report):
            actions.append(RepairAction(part, "keep", f"supported (score {part_report.score:.2f})",
                                        chunk_id=part_report.claims[0].chunk_id))
        elif len(part_report.claims) == 1:
            actions.append(_decide(part_report.claims[0], chunks, by_id, report=part_report, check=check,
                                   client=client, split=False))
        else:
            actions.append(RepairAction(part, "drop", f"not supported (score {part_report.score:.2f})"))
    kept = [action for action in actions if action.action != "drop"]
    summary = "; ".join(f"{action.action} {action.claim!r}" + ("" if action.action == "keep" else f" ({action.reason})")
                        for action in actions)  # why each part that is not kept as it is went
    return RepairAction(
        text,
        "edit",
        (f"whole-claim edit dropped: {tried}; " if tried else "") + f"split at its coordination: {summary}",
        edited=" ".join(_cited(action.edited or action.claim, None) for action in kept),
        chunk_id=kept[0].chunk_id,
        parts=tuple(actions),
    )


def _supported(part: Report) -> bool:
    return part.route is Route.ACCEPT and bool(part.claims)


# Where a claim may split: ", and" / "and" / ", but" / "but", and a bare comma of a list of verb phrases.
_COORDINATION_RE = re.compile(r",?\s+(?:and|but)\s+|,\s+", re.IGNORECASE)
_SINGULAR_AUXILIARIES = frozenset("is was has does isn't wasn't hasn't doesn't".split())
_PLURAL_AUXILIARIES = frozenset("are were have do aren't weren't haven't don't".split())
_MODALS = frozenset("can cannot can't will won't would wouldn't could couldn't should shouldn't may might must had "
                    "hadn't did didn't".split())
_ADVERBS = frozenset("also then now still only always usually typically currently already even later".split())
_DETERMINERS = frozenset("a an the its their his her our your this that these those no any all every each some".split())
_PREPOSITIONS = frozenset("of to in on at for with from by about over under into per via".split())
_RELATIVES = frozenset("which who whom whose that where when".split())
_MAX_SUBJECT_WORDS = 6
_MAX_CLAUSE_SUBJECT_WORDS = 4
_NOT_VERBS = frozenset("news series species means lens gas plus always sometimes perhaps hundred".split())


def conjuncts(claim: str) -> list[str]:
    """`claim` split at its coordination into claims of their own, or [claim] where no rule splits it safely.

    A coordinated verb phrase takes the subject of the clause before it ("The plan costs $49 and includes phone
    support" -> "The plan costs $49." and "The plan includes phone support."); a coordinated clause stands alone
    ("... and the team answers ...", "... but support is extra"). Without a part-of-speech tagger the rules are
    narrow, and a boundary they cannot read stays joined: the clause before it must have a verb; a verb phrase
    must begin with a verb that agrees with that clause's (or an auxiliary), and one in "-s" or "-ed" after a word
    of the same ending is taken for a list of nouns ("sells shoes and boots made of leather") unless an adverb
    ("and also includes"), a determiner, a number or an amount ("takes 5 days and costs $10") marks it a verb; a
    bare comma joins verb phrases only. A part is made of the claim's own words, so it never says more than the
    claim did."""
    body = claim.strip().rstrip(".!?;: ")
    matches = list(_COORDINATION_RE.finditer(body))
    if not matches:
        return [claim]
    starts = [0, *(match.end() for match in matches)]
    ends = [*(match.start() for match in matches), len(body)]
    segments = [body[start:end] for start, end in zip(starts, ends, strict=True)]
    separators = [match.group() for match in matches]
    parts = [segments[0]]
    head = 0  # the part whose clause the next verb phrase belongs to
    for separator, segment in zip(separators, segments[1:], strict=True):
        subject = _subject(parts[head])
        part = None if subject is None else _conjunct(segment, separator, parts[-1], subject)
        if part is None:
            parts[-1] += separator + segment  # not a boundary the rules can read: it stays joined
        else:
            text, is_clause = part
            parts.append(text)
            head = len(parts) - 1 if is_clause else head
    if len(parts) < 2:
        return [claim]
    return [_cited(part, None) for part in parts]


def _conjunct(segment: str, separator: str, before: str, subject: tuple[list[str], str]) -> tuple[str, bool] | None:
    """The claim a conjunct makes, and whether it is a clause of its own (else a verb phrase given `subject`)."""
    words = segment.split()
    at = 0
    while at < len(words) - 2 and words[at].lower() in _ADVERBS:
        at += 1
    form = _verb_form(words[at]) if words else None
    if form is not None and at + 1 < len(words):
        subject_words, subject_form = subject
        if not _agrees(subject_form, form):
            return None
        last = before.split()[-1] if before.split() else ""
        if form in ("s", "ed") and _verb_form(last) == form and at == 0 and not _object_start(words[at + 1]):
            return None  # "shoes and boots made of ...": a list of nouns, not two verb phrases
        return " ".join([*subject_words, *words]), False
    if separator.strip() == "," or len(words) < 3:
        return None
    clause = _subject(segment)
    # A clause with a subject of its own ("and the team answers ...", "but support is extra"); not one whose verb
    # could be a participle ("and boots made of leather").
    if clause is not None and clause[1] != "ed" and len(clause[0]) <= _MAX_CLAUSE_SUBJECT_WORDS:
        return segment, True
    return None


def _subject(clause: str) -> tuple[list[str], str] | None:
    """The words before a clause's first verb (one to six words, the verb followed by more) and that verb's form;
    None when the clause has no verb the rules see."""
    words = clause.split()
    after_preposition = False
    for at in range(1, min(len(words) - 1, _MAX_SUBJECT_WORDS + 1)):
        before = words[at - 1].lower()
        if before.endswith(",") or before in _RELATIVES:
            return None  # "The plan, which costs ...", "The plan, sold online, costs ...": no subject to repeat
        after_preposition = after_preposition or before in _PREPOSITIONS
        form = _verb_form(words[at])
        if form is None:
            continue
        if form == "s" and words[at].lower() not in _SINGULAR_AUXILIARIES and (
            before in _DETERMINERS
            or before in _PREPOSITIONS
            or (after_preposition and at + 2 < len(words) and _verb_form(words[at + 1]) is not None)
        ):
            continue  # a noun: "the plans", "for refunds", "shipping to EU countries takes ..."
        return words[:at], form
    return None


def _verb_form(word: str) -> str | None:
    """"s" (includes, is), "plural" (are), "modal" (can, did), "ed" (launched), or None: not read as a verb."""
    lower = word.lower()
    if lower in _SINGULAR_AUXILIARIES:
        return "s"
    if lower in _PLURAL_AUXILIARIES:
        return "plural"
    if lower in _MODALS:
        return "modal"
    if not lower.isalpha() or not word[:1].islower() or len(lower) < 4 or lower in _NOT_VERBS:
        return None
    if lower.endswith("ed"):
        return "ed"
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is", "ics")):
        return "s"
    return None


def _object_start(word: str) -> bool:
    """A determiner, a number or an amount: what follows a verb ("costs $10", "takes 5 days", "includes the app")
    far more often than a noun of a list."""
    return word.lower() in _DETERMINERS or any(ch.isdigit() for ch in word)


def _agrees(subject_form: str, form: str) -> bool:
    """Whether a verb phrase of `form` can share the subject of a clause whose verb is of `subject_form`. An "-ed"
    phrase after a form of "be" or "have" is left alone: "was born ... and died" and "was founded ... and acquired"
    read alike without a tagger."""
    if form == "modal":
        return True
    if form == "ed":
        return subject_form == "ed"
    if form == "s":
        return subject_form in ("s", "modal", "ed")
    return subject_form in ("plural", "modal", "ed")


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
    check: AnswerCheck,
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
    edit_report = _verify_as(report, edited, chunks, check)
    if edit_report.route is not Route.ACCEPT or not edit_report.claims:
        return RepairAction(text, "drop", f"the edit did not verify (score {edit_report.score:.2f})", edited=edited)
    return RepairAction(
        text,
        "edit",
        f"edited and re-verified (score {edit_report.score:.2f})",
        edited=edited,
        chunk_id=edit_report.claims[0].chunk_id,
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
            pieces = [piece for r, a in members if a.action != "drop" for piece in _pieces(r, a, cite=cite)]
        if pieces:
            # Line breaks between surviving sentences are kept, so lists stay lists.
            gap = report.answer[last_end : members[0][0].claim.span[0]] if last_end is not None else ""
            out += ("\n" if "\n" in gap else " ") if out else ""
            out += " ".join(pieces)
            last_end = members[-1][0].claim.span[1]
    return out


def _pieces(result: ClaimResult, action: RepairAction, *, cite: bool) -> list[str]:
    """A surviving claim written out: its edit, or each surviving part of a split claim with its own chunk."""
    if action.parts:
        return [_cited(part.edited or part.claim, part.chunk_id if cite else None)
                for part in action.parts if part.action != "drop"]
    return [_cited(action.edited or result.claim.text, action.chunk_id if cite else None)]


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
        route=Route.ACCEPT,
        claims=(),
        abstained=True,
        findings=(),
        meta=dataclasses.replace(report.meta, repaired_from=report.answer),
    )
