"""Role swaps: who wrote, reviewed, founded, acquired, sued or beat whom, where a sentence says so outright.

"The report was written by Alice and reviewed by Bob" contradicts "The report was written by Bob": both
names are in the evidence, and the claim gives the writer's role to the reviewer. A cross-encoder reads
the same words in both and calls that supported, so this check reads the relations with patterns:

- passive: "<X> was written by A", "written by A and B", "reviewed by B" (X, the patient, where it is a name);
- active: "A wrote ...", "A acquired X", "A beat X".

A claim relation (verb, agent, patient) is contradicted by its evidence sentence when that sentence states
the same verb with another agent for the same patient (or the patient and agent the other way round:
"GitHub acquired Microsoft"), no relation there gives the claim's agent that verb, and the claim's agent
holds another role in the sentence (agent of another verb, or a patient). A name the sentence does not give
a role is no swap: NOT_FOUND or not is the model's call.
Negated relations ("was not written by") are left to the negation check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.foundation.types import Finding, Verdict

# verb -> (past-participle forms for "by" phrases, past/present forms for the active voice); synonyms share a verb.
_VERBS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "write": (("written", "authored", "co-written", "penned"), ("wrote", "writes", "authored", "penned")),
    "review": (("reviewed",), ("reviewed", "reviews")),
    "edit": (("edited",), ("edited", "edits")),
    "found": (("founded", "co-founded", "established"), ("founded", "co-founded", "established")),
    "acquire": (("acquired", "bought", "purchased"), ("acquired", "acquires", "bought", "purchased")),
    "sue": (("sued",), ("sued", "sues")),
    "beat": (("beaten", "defeated"), ("beat", "beats", "defeated", "defeats")),
    "direct": (("directed",), ("directed", "directs")),
    "compose": (("composed",), ("composed",)),
    "design": (("designed",), ("designed",)),
    "develop": (("developed",), ("developed",)),
    "create": (("created",), ("created",)),
    "invent": (("invented",), ("invented",)),
    "discover": (("discovered",), ("discovered",)),
    "publish": (("published",), ("published",)),
    "produce": (("produced",), ("produced",)),
    "paint": (("painted",), ("painted",)),
    "lead": (("led",), ("led",)),
    "approve": (("approved",), ("approved", "approves")),
    "sign": (("signed",), ("signed",)),
    "replace": (("replaced",), ("replaced", "replaces")),
    "hire": (("hired",), ("hired",)),
    "interview": (("interviewed",), ("interviewed",)),
    "translate": (("translated",), ("translated",)),
    "illustrate": (("illustrated",), ("illustrated",)),
    "give": (("given", "delivered", "presented"), ("gave", "delivered", "presented")),
}
_PASSIVE = {form: verb for verb, (forms, _) in _VERBS.items() for form in forms}
_ACTIVE = {form: verb for verb, (_, forms) in _VERBS.items() for form in forms}

_WORD = r"[A-Z][\w'&.\-]*"
_NAME = rf"{_WORD}(?:\s+(?:(?:of|de|van|von|der|&)\s+)?{_WORD})*"
_NAMES = rf"{_NAME}(?:\s*,\s*{_NAME})*(?:,?\s+(?:and|&)\s+{_NAME})?"
_BE = r"(?:was|were|is|are|has\s+been|have\s+been|had\s+been|will\s+be|be|being)"
_ADVERBS = r"(?:(?:also|later|then|first|eventually|jointly|originally|officially|successfully|reportedly)\s+)*"
_PASSIVE_RE = re.compile(
    rf"(?:(?P<patient>{_NAME})\s+{_BE}\s+)?(?P<neg>not\s+|never\s+)?{_ADVERBS}"
    rf"\b(?P<verb>{'|'.join(map(re.escape, sorted(_PASSIVE, key=len, reverse=True)))})\s+by\s+(?P<agents>{_NAMES})"
)
_ACTIVE_RE = re.compile(
    rf"(?P<agents>{_NAMES})\s+(?:(?:has|had|have)\s+)?{_ADVERBS}"
    rf"(?P<verb>{'|'.join(map(re.escape, sorted(_ACTIVE, key=len, reverse=True)))})\b"
    rf"(?:\s+(?:the\s+)?(?P<patient>{_NAME}))?"
)
_SPLIT_NAMES_RE = re.compile(r"\s*,\s*(?:and\s+|&\s+)?|\s+(?:and|&)\s+")
# Capitalised at the start of a sentence, but no name: "The report", "It", "In 2019, Acme ...".
_NOT_NAMES = frozenset(
    "the a an it its he she they we i you his her their our this that these those in on at after before when "
    "while then there here his hers which who whom what also".split()
)


@dataclass(frozen=True, slots=True)
class Relation:
    verb: str
    agent: str
    patient: str | None
    negated: bool = False
    agent_span: tuple[int, int] = field(default=(0, 0), compare=False)
    """Where the agent's name stands in the text (the synthetic role-swap generator exchanges names there)."""
    patient_span: tuple[int, int] | None = field(default=None, compare=False)


def relations(text: str) -> list[Relation]:
    """The explicit agent relations a sentence states, active and passive."""
    found: list[Relation] = []
    for m in _PASSIVE_RE.finditer(text):
        patient = _name(m.group("patient") or "") or None
        patient_span = _span_of(text, patient, m.start("patient")) if patient else None
        for agent, span in _names(text, m.start("agents"), m.end("agents")):
            found.append(Relation(_PASSIVE[m.group("verb")], agent, patient, bool(m.group("neg")), span, patient_span))
    for m in _ACTIVE_RE.finditer(text):
        if text[m.end("verb") :].lstrip().startswith("by"):
            continue  # "bought by": passive, read above
        patient = _name(m.group("patient") or "") or None
        patient_span = _span_of(text, patient, m.start("patient")) if patient else None
        negated = bool(re.search(r"\b(?:not|never|n't)\s*$", text[: m.start("verb")]))
        for agent, span in _names(text, m.start("agents"), m.end("agents")):
            found.append(Relation(_ACTIVE[m.group("verb")], agent, patient, negated, span, patient_span))
    return found


def role_findings(claim: str, evidence: str | None, context: Sequence[str] | None = None) -> list[Finding]:
    """One finding per claim relation its evidence sentence gives to someone else: someone the evidence also
    names in another role, or (given the `context`'s texts, all of them) someone the context names nowhere."""
    claimed_relations = [r for r in relations(claim) if not r.negated]
    if evidence is None or not claimed_relations:
        return []
    stated = [r for r in relations(evidence) if not r.negated]
    # A swap of roles: the claim's agent holds another role in the evidence. "developed by British
    # naturalist Alfred Russel Wallace" names "British" in passing, which is no role. Or a stranger: the
    # claim's agent is named nowhere in the context ("given by Tom Becker" where it was given by Priya Nair).
    holders = [r.agent for r in stated] + [r.patient for r in stated if r.patient is not None]
    context_words: set[str] | None = None  # read only for an agent the evidence gives no role
    findings = []
    for claimed in claimed_relations:
        if not any(_same(claimed.agent, holder) for holder in holders):
            if context is None:
                continue
            if context_words is None:
                context_words = _tokens(" ".join(context))
            if _tokens(claimed.agent) & context_words:
                continue
        same_verb = [r for r in stated if r.verb == claimed.verb]
        if any(_same(r.agent, claimed.agent) and _compatible(r.patient, claimed.patient) for r in same_verb):
            continue
        others = [
            r
            for r in same_verb
            if _compatible(r.patient, claimed.patient)
            or (r.patient is not None and _same(r.agent, claimed.patient) and _same(r.patient, claimed.agent))
        ]
        if others:
            findings.append(
                Finding(
                    "role_conflict",
                    f"the context gives {claimed.verb!r} to {others[0].agent!r}, not {claimed.agent!r}",
                    Verdict.CONTRADICTED,
                )
            )
    return findings


def _names(text: str, start: int, end: int) -> list[tuple[str, tuple[int, int]]]:
    """The names of a list ("A, B and C") in text[start:end], each with its span."""
    out = []
    at = start
    for part in _SPLIT_NAMES_RE.split(text[start:end]):
        if name := _name(part):
            span = _span_of(text, name, at)
            out.append((name, span))
            at = span[1]
    return out


def _span_of(text: str, name: str, start: int) -> tuple[int, int]:
    at = text.find(name, start)
    return (at, at + len(name))


def _name(raw: str) -> str:
    """The name without a leading determiner or pronoun; "" when nothing of a name is left."""
    words = raw.split()
    while words and words[0].lower() in _NOT_NAMES:
        words = words[1:]
    name = " ".join(words)
    # A full stop after a name ends the sentence; after a single letter it is an initial ("J. R. R. Tolkien").
    return name[:-1] if name.endswith(".") and len(words[-1]) > 2 else name


def _tokens(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[\w'&\-]+", text)}


def _same(one: str | None, other: str | None) -> bool:
    """Two names of one entity ("Alice Smith" and "Smith"): one name's words are all among the other's."""
    if one is None or other is None:
        return False
    a, b = _tokens(one), _tokens(other)
    return bool(a) and bool(b) and (a <= b or b <= a)


def _compatible(one: str | None, other: str | None) -> bool:
    """Patients agree when either is unknown (the sentence's subject is no name) or they name the same thing."""
    return one is None or other is None or _same(one, other)


def _role_check(item: ClaimCheckInput) -> list[Finding]:
    # The whole context: its index's sentences are only those that hold a figure.
    return role_findings(item.claim.text, item.evidence, item.context.texts)


CHECK = ClaimCheck("roles", _role_check, CheckEffect.VERDICT, needs_evidence=True)
