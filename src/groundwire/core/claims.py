"""Answer -> atomic claims.

The rule-based decomposer splits sentences with pysbd, strips citation markers, drops non-claims
(greetings, filler, questions, refusals) and splits compound sentences only where a rule can do it
safely: semicolons, ", and/but <new subject>" and relative ", which ..." clauses. An LLM decomposer
(llm/decompose.py) implements the same `Decomposer` protocol.
"""

from __future__ import annotations

import functools
import re
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from groundwire.foundation.textutil import content_words, trim_span
from groundwire.foundation.types import REFUSAL_TOKEN, Claim

# [S1], [S1, S2], [c_8f21ab], [Source 2], [1], [1, 3], [doc3], [Unverified]. A marker must contain a digit
# (or be [Unverified]) so that editorial brackets such as [sic] survive.
_CITE_ID = r"(?:S\d+|c_[0-9a-fA-F]{3,}|Source\s*\d+|\d{1,3}|[A-Za-z][\w-]*\d[\w-]*)"
# A marker takes the whitespace before it (stripping leaves no gap). The lookbehind lets a match start only where
# that whitespace run starts: without it every position of a long run retries `\s*` (quadratic on "\n" * 50000).
CITATION_RE = re.compile(rf"(?<!\s)(?:\s*\[(?P<ids>{_CITE_ID}(?:\s*[,;]\s*{_CITE_ID})*)\]|\s*\[Unverified\])")
_ID_SPLIT_RE = re.compile(r"\s*[,;]\s*")
# Markdown emphasis and code marks carry no content ("**[S1]**", "**Price:** $5"). One between two word
# characters separates them, as it does in the context's words ("G`E" is two words, never "GE").
_MARKDOWN_RE = re.compile(r"\*\*|__|`")
_INNER_MARKDOWN_RE = re.compile(r"(?<=\w)(?:\*\*|__|`)(?=\w)")

_LIST_MARKER_RE = re.compile(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+")
_INTERJECTION_RE = re.compile(
    r"^(?:hi|hello|hey|greetings|thanks|thank you|sure|certainly|of course|absolutely|great question|"
    r"good question|okay|ok|yes|no|well)\b[\s,!.:;-]*",
    re.IGNORECASE,
)
_FILLER_RE = re.compile(
    r"\b(?:i hope (?:this|that) helps|hope (?:this|that) helps|let me know|feel free to|happy to help|"
    r"if you have any (?:other |more |further )?questions|is there anything else|glad to help|"
    r"please note that this|as an ai)\b",
    re.IGNORECASE,
)
# Statements about the context rather than from it: "The passages do not mention X", "Unable to answer
# based on the given passages", "It does not provide information about X".
_REFUSAL_RE = re.compile(
    r"\b(?:(?:the )?(?:provided |given )?(?:context|passages?|sources?|documents?|information|(?:structured )?data|"
    r"text|article)\s+(?:only\s+)?(?:does not|doesn't|do not|don't|did not)\s+(?:provide|mention|contain|say|include|"
    r"specify|state|support|give|offer)"
    r"|(?:does not|doesn't|do not|don't|did not)\s+(?:provide|include|contain|give)\s+(?:\w+\s+){0,2}information"
    r"|i (?:do not|don't) (?:know|have (?:enough )?information)"
    r"|(?:unable|not able|cannot|can't|can not)(?: to)? (?:answer|provide|determine|say)\b[^.]*\b(?:passages?|context|"
    r"sources?|documents?|information|data|question)"
    r")\b",
    re.IGNORECASE,
)
_CLAUSE_SPLIT_RE = re.compile(
    r";\s+|,\s+(?:and|but|while|whereas|so)\s+(?=(?:it|they|he|she|we|this|these|those|the|its|their|his|her|"
    r"there|[A-Z])\b)"
)
_RELATIVE_RE = re.compile(r",\s+which\s+", re.IGNORECASE)
# "Did you know (that) X?" asserts X; chat assistants state facts this way. Not when a wh-word follows
# ("do you know who coaches them?") or it asks about a thing ("have you heard of the band?").
_ASSERTIVE_QUESTION_RE = re.compile(
    r"^(?:did|do|have)\s+you\s+(?:know|hear|heard|realize|realise|notice|noticed)\b(?:\s+that\b)?\s+"
    r"(?!(?:who|whom|whose|what|where|when|why|how|which|whether|if|of|about)\b)",
    re.IGNORECASE,
)
# "He is the director." has one content word and is still a claim: a third-person subject followed by a
# verb or an article. "I agree.", "Not sure." and "Good." are not.
_SHORT_ASSERTION_RE = re.compile(
    r"^(?:(?:and|but|so)\s+)?(?:it|its|it's|he|he's|she|she's|they|they're|this|that|these|those|there|there's)"
    r"\s+(?:is|was|are|were|has|had|have|will|would|can|could|must|does|did|a|an|the)\b",
    re.IGNORECASE,
)
# An answer to a question may be a bare fragment: "When was it founded?" -> "1959" (see bare_answer).
_BARE_ANSWER_MAX_WORDS = 8
_FIRST_PERSON_RE = re.compile(r"^(?:i|i'm|i've|i'd|me|my|we|we're|us|our)\b", re.IGNORECASE)
_REACTION_RE = re.compile(
    r"^(?:(?:very|so|really|pretty)\s+)?(?:good|great|fine|nice|cool|awesome|wow|interesting|true|right|exactly|"
    r"agreed|indeed|same(?: here)?|me too|sounds? (?:good|great|fun)|not sure|maybe|perhaps|probably)$",
    re.IGNORECASE,
)
_MIN_CONTENT_WORDS = 2
_MIN_ASSERTED_WORDS = 3
"""A "did you know" question counts as a claim only with this many content words after the prefix."""


@runtime_checkable
class Decomposer(Protocol):
    def decompose(self, answer: str, *, question: str | None = None) -> list[Claim]: ...


@dataclass(frozen=True, slots=True)
class Sentence:
    """One answer sentence with its span and, when it is not a claim, the reason it was skipped."""

    text: str
    span: tuple[int, int]
    skip_reason: str | None


def strip_citations(text: str) -> str:
    return CITATION_RE.sub("", _strip_markdown(text)).strip()


def _strip_markdown(text: str) -> str:
    return _MARKDOWN_RE.sub("", _INNER_MARKDOWN_RE.sub(" ", text))


def cited_ids(text: str) -> tuple[str, ...]:
    """The ids inside citation markers, in order of appearance, e.g. ("S1", "c_8f21")."""
    ids: list[str] = []
    for match in CITATION_RE.finditer(_strip_markdown(text)):
        if match.group("ids"):
            ids.extend(part for part in _ID_SPLIT_RE.split(match.group("ids")) if part)
    return tuple(dict.fromkeys(ids))


def sentences(answer: str) -> tuple[Sentence, ...]:
    """Split the answer into sentences (lines first, so bullet lists split) and classify each.

    Not cached: a check splits its answer once, in its plan (`Split.sentences`, `Plan.sentences`), and everything
    after it (the skipped sentences of the report, the citation validator, a bare answer) reads the plan."""
    return tuple(_iter_sentences(answer))


def _iter_sentences(answer: str) -> Iterator[Sentence]:
    for line_start, line in _lines(answer):
        for piece_start, piece_end in _segment(line):
            start, end = trim_span(line, piece_start, piece_end)
            if end > start:
                text = line[start:end]
                yield Sentence(text, (line_start + start, line_start + end), _skip_reason(text))


SENTENCES_PER_CLAIM = 4
"""An answer may have this many sentences per claim its caller allows: skipped ones (greetings, filler, a line with
no statement) cost splitting too, and 50,000 lines of "x" were never counted by a limit on claims."""


@dataclass(frozen=True, slots=True)
class Split:
    """What a rule split read of an answer: its sentences, its claims, and whether it read all of it."""

    claims: list[Claim]
    complete: bool
    """False: the answer has more than `limit` claims (`claims` holds the first limit + 1), or more than
    (limit + 1) x SENTENCES_PER_CLAIM sentences; the rest was never split."""
    sentences: tuple[Sentence, ...] = ()
    """The sentences read (all of the answer's when complete), each classified: what the plan carries forward."""


@runtime_checkable
class StoppingDecomposer(Decomposer, Protocol):
    """A decomposer that splits the answer into sentences once and hands them on with its claims, and can stop
    splitting once an answer has more claims (or sentences) than a limit: refusing an oversized answer then
    costs the first `limit` claims' worth of splitting, not the whole answer's."""

    def split(self, answer: str, *, question: str | None = None, limit: int | None = None) -> Split:
        """The answer's sentences and claims; with a limit, its first `limit + 1` claims when it has more (then
        incomplete)."""
        ...


class RuleDecomposer:
    """Deterministic claim splitter: no model, no network."""

    def decompose(self, answer: str, *, question: str | None = None) -> list[Claim]:
        return self.split(answer, question=question).claims

    def split(self, answer: str, *, question: str | None = None, limit: int | None = None) -> Split:
        claims: list[Claim] = []
        found: list[Sentence] = []
        for sentence in _iter_sentences(answer):
            found.append(sentence)
            claims.extend(_sentence_claims(answer, sentence))
            # The rest of the answer is never split.
            if limit is not None and len(claims) > limit:
                return Split(claims[: limit + 1], complete=False, sentences=tuple(found))
            if limit is not None and len(found) > (limit + 1) * SENTENCES_PER_CLAIM:
                return Split(claims, complete=False, sentences=tuple(found))
        return Split(_or_bare_answer(answer, claims, question, found), complete=True, sentences=tuple(found))


def _or_bare_answer(answer: str, claims: list[Claim], question: str | None, found: Sequence[Sentence]) -> list[Claim]:
    """The claims, or where the answer has none and answers a question, its bare answer ("1959") as one."""
    if not claims and question:
        bare = bare_answer(answer, found)
        if bare is not None:
            claims.append(bare)
    return claims


def _sentence_claims(answer: str, sentence: Sentence) -> Iterator[Claim]:
    return _atomic_claims(answer, sentence) if sentence.skip_reason is None else iter(())


def bare_answer(answer: str, found: Sequence[Sentence]) -> Claim | None:
    """A short fragment that answers a question ("1959", "ESPN", "Yes, in Paris") as one claim (`found`: the
    answer's sentences).

    Alone, "1959" asserts nothing; as the answer to "When was the magazine founded?" it is the whole claim,
    and leaving it unchecked would accept any number. The fragment is scored as it stands, the way QA
    answers are (the question stays on the report). A lone "yes"/"no", a first-person remark ("I am not
    sure"), a reaction ("Great!") or a fragment of more than eight words is not taken as one.
    """
    if len(found) != 1 or found[0].skip_reason != "greeting_or_too_short":
        return None
    sentence = found[0]
    start, end = sentence.span
    marker = _LIST_MARKER_RE.match(answer[start:end])
    body_start = start + (marker.end() if marker else 0)
    body_start += _interjection_length(answer[body_start:end])
    text = strip_citations(answer[body_start:end]).strip().rstrip(" ,;:.!")
    has_content = bool(content_words(text)) or any(ch.isdigit() for ch in text)
    if (
        not has_content
        or len(text.split()) > _BARE_ANSWER_MAX_WORDS
        or _FIRST_PERSON_RE.match(text)
        or _REACTION_RE.match(text)
    ):
        return None
    return Claim(
        text=text[:1].upper() + text[1:] + ".",
        span=(body_start, end),
        sentence=sentence.text,
        cited_ids=cited_ids(sentence.text),
    )


def _atomic_claims(answer: str, sentence: Sentence) -> Iterator[Claim]:
    start, end = sentence.span
    ids = cited_ids(sentence.text)
    body_start = start + _leading_noise_length(answer[start:end])
    previous_start = body_start
    for part_start, part_end, is_relative in _clause_spans(answer, body_start, end):
        text = strip_citations(answer[part_start:part_end]).rstrip(" ,;:.?!")
        antecedent = _antecedent(strip_citations(answer[previous_start:part_start])) if is_relative else ""
        previous_start = part_start
        if _too_short(text):
            continue
        text = f"{antecedent or 'This'} {text}" if is_relative else (text[:1].upper() + text[1:])
        part_ids = cited_ids(answer[part_start:part_end]) or ids
        yield Claim(text=text + ".", span=(part_start, part_end), sentence=sentence.text, cited_ids=part_ids)


_ANTECEDENT_RE = re.compile(
    r"\b(?:the|a|an|this|that|these|those|its|their|his|her|our|your)\s+(?:[\w'&-]+\s+){0,2}[\w'&-]+\s*,?\s*"
    r"(?:which\s*)?$",
    re.IGNORECASE,
)


def _antecedent(main_clause: str) -> str:
    """The noun phrase a ", which ..." clause refers to: the last determiner phrase of up to four words
    right before the comma ("watched the video, which ..." -> "The video"), or "" when there is none.
    A phrase that is the whole main clause ("The warranty covers parts, which ...") holds its verb: the
    "which" then refers to the whole clause, and the claim keeps "This"."""
    match = _ANTECEDENT_RE.search(main_clause)
    if match is None or not main_clause[: match.start()].strip():
        return ""
    phrase = re.sub(r"\s*,?\s*(?:which\s*)?$", "", match.group(0), flags=re.IGNORECASE)
    return phrase[:1].upper() + phrase[1:]


def _clause_spans(answer: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Split [start, end) at safe clause boundaries; the bool marks a relative "which" clause."""
    text = answer[start:end]
    spans: list[tuple[int, int, bool]] = []
    cursor = 0
    for match in _CLAUSE_SPLIT_RE.finditer(text):
        spans.extend(_relative_split(text, cursor, match.start(), start))
        cursor = match.end()
    spans.extend(_relative_split(text, cursor, len(text), start))
    return spans


def _relative_split(text: str, start: int, end: int, offset: int) -> list[tuple[int, int, bool]]:
    match = _RELATIVE_RE.search(text, start, end)
    if match is None or len(content_words(text[start : match.start()])) < _MIN_CONTENT_WORDS:
        return [(offset + start, offset + end, False)]
    return [(offset + start, offset + match.start(), False), (offset + match.end(), offset + end, True)]


def _leading_noise_length(text: str) -> int:
    """Length of a list marker or interjection ("Sure, ...") in front of real content."""
    marker = _LIST_MARKER_RE.match(text)
    cut = marker.end() if marker else 0
    interjection = _INTERJECTION_RE.match(text[cut:])
    if interjection and len(content_words(text[cut + interjection.end() :])) >= _MIN_CONTENT_WORDS:
        cut += interjection.end()
    assertive = _asserted_question(text[cut:])
    return cut + assertive.end() if assertive else cut


def _asserted_question(text: str) -> re.Match[str] | None:
    """The "did you know (that)" prefix of a question that asserts what follows it, else None."""
    body = text.rstrip()
    match = _ASSERTIVE_QUESTION_RE.match(body) if body.endswith("?") else None
    if match and len(content_words(body[match.end() :])) >= _MIN_ASSERTED_WORDS:
        return match
    return None


REFUSAL_REASONS = frozenset({"refusal", "empty_or_refusal_token"})
"""The skip reasons of a sentence that declines to answer. An answer with no checkable claim is accepted only when
one of its sentences declines: other claimless answers (chit-chat, a question back, filler) are escalated, since in
BEGIN dev 90 of 676 hallucinated answers have no checkable claim and all were accepted (issue 56)."""


def claimless(reasons: Iterable[str]) -> tuple[bool, str]:
    """For an answer with no checkable claim, from its sentences' skip reasons: whether it declines to answer, and
    what its report says."""
    declines = any(reason in REFUSAL_REASONS for reason in reasons)
    return declines, "no checkable claims in the answer: score 1.0 by definition (nothing is asserted); " + (
        "it declines to answer (a refusal), so it is accepted"
        if declines
        else "it does not decline to answer either, so it is not accepted outright"
    )


def _skip_reason(text: str) -> str | None:
    body = strip_citations(_LIST_MARKER_RE.sub("", text, count=1))
    if not body or body.strip() == REFUSAL_TOKEN:
        return "empty_or_refusal_token"
    if body.endswith("?") and _asserted_question(body[_interjection_length(body) :]) is None:
        return "question"
    if body.endswith(":") or body.startswith("#"):
        return "heading"
    if _FILLER_RE.search(body):
        return "filler"
    if _REFUSAL_RE.search(body):
        return "refusal"
    if _too_short(body[_interjection_length(body) :]):
        return "greeting_or_too_short"
    return None


def _too_short(text: str) -> bool:
    """Too little to check: fewer than two content words and no digit, unless a one-word sentence has the
    shape of an assertion ("He was a mathematician")."""
    if any(ch.isdigit() for ch in text):
        return False
    n = len(content_words(text))
    return n == 0 or (n < _MIN_CONTENT_WORDS and _SHORT_ASSERTION_RE.match(text.strip()) is None)


def _interjection_length(text: str) -> int:
    match = _INTERJECTION_RE.match(text)
    return match.end() if match else 0


def _lines(text: str) -> Iterator[tuple[int, str]]:
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            yield offset, line
        offset += len(line)


_SEGMENT_WINDOW = 4_000
_SEGMENT_MARGIN = 1_000
"""A line longer than the window is segmented a window at a time; sentences that end within the last
`_SEGMENT_MARGIN` characters of a window are segmented again at the start of the next one, so a quote, a
parenthesis or an abbreviation cut by the window's edge is seen whole. A window with no settled boundary is cut
at its last space before the margin: a sentence of more than 3,000 characters is far beyond any model's window
(an unscorable claim, whole or in pieces), and pysbd's cost on one boundary-free text grows with its square."""
_NO_BOUNDARY_RE = re.compile(r"[\w\s,]*")
"""Text made only of words, spaces and commas: pysbd finds no sentence boundary in it (it needs punctuation)."""


def _segment(line: str) -> Iterator[tuple[int, int]]:
    """pysbd's sentence spans over one line, in time linear in its length.

    pysbd's abbreviation pass rewrites the whole text once per abbreviation it finds, so one call on a long line
    costs time quadratic in its length (13.5 s for a 100,000-character answer, 0.25 s for 10,000). A window at a
    time gives the same sentences: pysbd decides each boundary from the text around it."""
    cursor = 0
    while cursor < len(line):
        end = min(len(line), cursor + _SEGMENT_WINDOW)
        settle_by = end - cursor - _SEGMENT_MARGIN
        text = line[cursor:end]
        boundary_free = end < len(line) and _NO_BOUNDARY_RE.fullmatch(text, 0, settle_by) is not None
        pieces = [] if boundary_free else _sentence_spans(text)
        if end == len(line):
            yield from ((cursor + start, cursor + stop) for start, stop in pieces)
            return
        settled = [(start, stop) for start, stop in pieces[:-1] if stop <= settle_by]
        if not settled:  # one sentence longer than the window: cut it at a space, the next piece starts there
            space = text.rfind(" ", 0, settle_by)
            settled = [(0, space + 1 if space > 0 else settle_by)]
        yield from ((cursor + start, cursor + stop) for start, stop in settled)
        cursor += settled[-1][1]


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """pysbd's sentences of `text` as (start, end) spans, each with the whitespace after it.

    pysbd's own char_span option finds each sentence by scanning the text from its start again, which is
    quadratic in the number of sentences ("1. " * 1000 took 2.7 s a window); each search here starts where the
    previous sentence ended, which gives the same spans in one pass."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    for sentence in _segmenter().processor(text).process():
        start = text.find(sentence, cursor)
        if start < 0 or not sentence:
            continue  # pysbd drops a sentence it cannot place, too
        stop = start + len(sentence)
        while stop < len(text) and text[stop].isspace():  # pysbd's spans take the whitespace after a sentence
            stop += 1
        spans.append((start, stop))
        cursor = stop
    return spans


_THREAD_STATE = threading.local()


def _segmenter() -> Any:  # pysbd has no type hints
    """One pysbd segmenter per thread: a segmenter keeps per-call state on itself and is not thread-safe."""
    segmenter = getattr(_THREAD_STATE, "segmenter", None)
    if segmenter is None:
        segmenter = _THREAD_STATE.segmenter = _pysbd().Segmenter(language="en", clean=False, char_span=True)
    return segmenter


@functools.cache
def _pysbd() -> Any:
    """pysbd, imported once. Three of its modules hold invalid escape sequences ("\\s"): compiling them, at a first
    import without cached bytecode, warns (DeprecationWarning; SyntaxWarning from Python 3.12), and a test suite
    that calls groundwire would show those warnings in every run. Only these are silenced, only here."""
    with warnings.catch_warnings():
        for category in (DeprecationWarning, SyntaxWarning):
            warnings.filterwarnings("ignore", "invalid escape sequence", category, module=r".*pysbd")
        import pysbd
    return pysbd
