"""Claims a context window states word for word, or nearly: the answer copied a sentence (or a clause) of it.

The scorer alone cannot be trusted with a copy: the bundled cross-encoder scored one sentence paired with itself
from 0.18 to 0.82 as incidental tokens changed ("9am" or "9 am", a "CET", a "from"; issue 49), and 0.14-0.9 on
sentences copied from the dev contexts, in canonical spelling or not: pairs whose hypothesis is the premise itself
are almost absent from its NLI training data (52 of 134,771 pairs). A copy is decided here, deterministically.

A claim is a near-verbatim copy of a window when its words are a run of the words of one sentence of the window,
both read in one normal form (`verbatim_words`): figures in their one spelling (core.figures.canonical_text,
whatever the verifier's own setting, so "9am to 5pm" and "9:00 to 17:00" read alike), case and punctuation
ignored, and the articles "a", "an" and "the" left out. Every other word, figure and name is the window's own, in
its order, so no figure, negation or name can differ. A copied piece must also mean in the claim what it means in
the window: it is the sentence or one of its clauses (`_clause_starts`), and the sentence does not question, deny,
hedge, attribute or make conditional what the claim copies, nor go on with a condition ("waived if you pay
annually"; `_stands_alone`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from groundwire.core.cancel import checkpoint
from groundwire.core.checks.certainty import MODAL_HEDGE_RE
from groundwire.core.figures import canonical_text
from groundwire.foundation.textutil import NEGATION_WORDS, STOPWORDS, normalize, sentence_spans

__all__ = ["VerbatimMatch", "verbatim_match", "verbatim_words"]

_ARTICLES = frozenset({"a", "an", "the"})
_WORD_RE = re.compile(r"[$€£¥]?\w+(?:[.:,'’]\w+)*%?")
MIN_WORDS = 4
"""A shorter claim ("It is 5 km") is too little text for its words to stand for what the window says."""
MIN_CONTENT_WORDS = 2
_QUALIFIERS = NEGATION_WORDS | frozenset(
    "if unless whether except provided providing assuming suppose supposedly hypothetically imagine "
    "claim claims claimed alleged allegedly rumour rumours rumoured rumor rumors rumored myth myths false untrue "
    "deny denies denied doubt doubts doubted dispute disputes disputed incorrect wrong mistaken mistakenly".split()
)
"""Words that, in the window's sentence around a copied piece, say it is not asserted as a fact."""
_CONTINUES_RE = re.compile(
    r"^\s*(?:$|[.!;:,)\]\"'\u2014\u2013]|-\s|(?:and|but|while|whereas|although|though|because|so|which|who|where"
    r"|including)\b)",
    re.IGNORECASE,
)
"""What may follow a copied piece of a sentence: its end, a clause break, or a clause that adds to it."""
_CLAUSE_BREAK_RE = re.compile(r"[,;:()\[\]\u2014\u2013]|\s-\s")
_CLAUSE_OPENERS = frozenset("and but yet so then while whereas although though because".split())
"""Words after which a clause the claim may copy begins ("..., and the Team plan costs $99")."""


@dataclass(frozen=True, slots=True)
class VerbatimMatch:
    """Where a claim is copied: the window (its index among the windows given) and the sentence's span in the
    window's text."""

    window: int
    span: tuple[int, int]


@dataclass(frozen=True, slots=True)
class _Words:
    text: str
    """The text in the normal form the words were read from (their offsets index it)."""
    words: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]


def verbatim_words(text: str) -> tuple[str, ...]:
    """The text as a copy is compared: figures in one spelling, lower case, no punctuation, no articles."""
    return _read(text).words


@lru_cache(maxsize=4096)
def _read(text: str) -> _Words:
    normal = normalize(canonical_text(text))
    found = [match for match in _WORD_RE.finditer(normal) if match.group(0) not in _ARTICLES]
    return _Words(
        normal,
        tuple(match.group(0).replace("’", "'") for match in found),
        tuple(match.start() for match in found),
        tuple(match.end() for match in found),
    )


def verbatim_match(claim: str, windows: Sequence[str], candidates: Sequence[int]) -> VerbatimMatch | None:
    """The first of the `candidates` (indices into `windows`) with a sentence the claim copies, or None."""
    wanted = verbatim_words(claim)
    if len(wanted) < MIN_WORDS or sum(word not in STOPWORDS for word in wanted) < MIN_CONTENT_WORDS:
        return None
    for index in candidates:
        checkpoint()  # a window at a time: a large context's windows stop at the time budget (core.cancel)
        text = windows[index]
        for start, end in sentence_spans(text):
            if _copied_from(wanted, text[start:end]):
                return VerbatimMatch(index, (start, end))
    return None


def _copied_from(wanted: tuple[str, ...], sentence: str) -> bool:
    read = _read(sentence)
    words, size = read.words, len(wanted)
    if wanted[0] not in words:  # cheap: most sentences share not even the first word
        return False
    at = [i for i in range(len(words) - size + 1) if words[i : i + size] == wanted and _clause_starts(read, i)]
    return any(_stands_alone(read.text, words[:i], read.ends[i + size - 1]) for i in at)


def _clause_starts(read: _Words, at: int) -> bool:
    """Word `at` begins its sentence or a clause of it: a claim copies a clause, not a phrase ("actor and film
    director" is no claim the sentence makes about whoever the question asked after)."""
    if at == 0:
        return True
    between = read.text[read.ends[at - 1] : read.starts[at]]
    return bool(_CLAUSE_BREAK_RE.search(between)) or read.words[at - 1] in _CLAUSE_OPENERS


def _stands_alone(sentence: str, before: tuple[str, ...], end: int) -> bool:
    """The copied piece is asserted by its sentence as it stands in the claim: nothing before it in the sentence
    negates, hedges, attributes or conditions it, the sentence is no question, and what follows it is its end,
    a clause break or a clause that adds to it (not "if you pay annually")."""
    if sentence.rstrip().endswith("?") or any(word in _QUALIFIERS for word in before):
        return False
    if MODAL_HEDGE_RE.search(" ".join(before)):
        return False
    after = sentence[end:]
    if not _CONTINUES_RE.match(after):
        return False
    following = _WORD_RE.findall(after)[:2]
    return not any(word in _QUALIFIERS or word == "only" for word in following)
